// The per-process report: one JSON object per line, appended with one write(2) to $IOSIG_REPORT (or
// the job's report.jsonl) at exit and before exec. Schema: docs/report.md.
#pragma once

namespace iosig::shim {

// Writes nothing when this process tracked no file. `before_exec`: the image is about to be replaced.
void write_process_report(bool before_exec);

} // namespace iosig::shim
