// Named signatures a library shares with its users.
#ifndef IOSIG_TEST_SIGDEFS_H
#define IOSIG_TEST_SIGDEFS_H
#pragma sigdef journal sequential persist size-per-IO(4K)
#pragma sigdef table random persist
#endif
