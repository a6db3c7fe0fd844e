// The per-process report: one JSON object per line, appended with one write(2) to $IOSIG_REPORT (or
// the job's report.jsonl) at exit (exit or _exit) and before exec. Schema: docs/report.md.
#pragma once

namespace iosig::shim {

enum class ReportMoment { exit, exec };

// Where the report goes and under which job/run, fixed when the library is loaded.
void remember_report_identity(const char* job, const char* run, const char* path);

// Writes nothing when this process tracked no file. No malloc, no lock: safe from _exit.
void write_process_report(ReportMoment moment);

} // namespace iosig::shim
