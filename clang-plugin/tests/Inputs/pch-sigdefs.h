// Sigdefs meant for a precompiled header (driver/precompiled-header.c).
#pragma sigdef journal sequential persist size-per-IO(4K)
#pragma sigdef mesh-out random temp
#pragma sigdef _empty
extern int open(const char *path, int flags, ...);
