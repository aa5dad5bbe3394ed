/* Input layout of fuzz-msghdr, shared with its seed generator.  All
 * multi-byte fields are little-endian.
 *
 *   byte 0     where the memory is mapped: an index (modulo 5) into
 *              fuzz_msghdr_bases; FUZZ_MSGHDR_BASE_TOP maps it so that it
 *              ends at 2^64, FUZZ_MSGHDR_BASE_RAW takes bytes 8-15
 *   byte 1     page size: 1 << (byte % 13), 1 to 4096 bytes
 *   byte 2     first unmapped page, counted from the base's page
 *   byte 3     number of unmapped pages from there (0: no hole)
 *   byte 4     how the fake reader behaves: bits 0-1 what a read at an
 *              unmapped address returns (FUZZ_MSGHDR_FAULT_*); bit 2 every
 *              read stops at a page boundary; bit 3 reads return a
 *              pseudo-random short count (seeded from the input's hash)
 *   byte 5     number of mmsghdr entries read at the message address:
 *              1 + (byte & 3)
 *   byte 6     length of the bytes (from the memory's start) given to
 *              msg_sockaddr_port
 *   byte 7     reserved
 *   8-15       the base for FUZZ_MSGHDR_BASE_RAW
 *   16-23      the msghdr (mmsghdr vector) address, as an offset from the
 *              base (wrapping)
 *   24-31      an iovec array address for msg_gather_iov, offset from the
 *              base (wrapping)
 *   32-39      its iovec count
 *   40-47      a data cap (bits 0-16 only: 0 to 131071)
 *   rest       the memory, mapped at the base
 *
 * Pointers inside the memory (msg_name, msg_iov, iov_base, msg_control) are
 * absolute addresses, as in a real process. */
#pragma once

#include <stdint.h>

#define FUZZ_MSGHDR_HEADER 48

#define FUZZ_MSGHDR_BASE_TOP UINT64_C (1)
#define FUZZ_MSGHDR_BASE_RAW UINT64_C (2)

/* Real bases are page-aligned, so the two markers cannot clash. */
static const uint64_t fuzz_msghdr_bases[] = {
  UINT64_C (0x10000),
  UINT64_C (0x7ffffffde000),   /* just below the top of x86_64 user space */
  FUZZ_MSGHDR_BASE_TOP,
  UINT64_C (0),                /* memory mapped at NULL */
  FUZZ_MSGHDR_BASE_RAW,
};

enum {
  FUZZ_MSGHDR_FAULT_EFAULT,    /* -EFAULT, like process_vm_readv */
  FUZZ_MSGHDR_FAULT_ZERO,      /* 0 bytes */
  FUZZ_MSGHDR_FAULT_EIO,       /* another errno */
  FUZZ_MSGHDR_FAULT_TOO_MANY,  /* a broken reader: more bytes than asked */
};

#define FUZZ_MSGHDR_PAGE_STOP 0x04
#define FUZZ_MSGHDR_RANDOM_SHORT 0x08

#define FUZZ_MSGHDR_CAP_MASK UINT64_C (0x1ffff)
