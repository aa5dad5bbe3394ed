/* Input layout of fuzz-record, shared with its seed generator: what the
 * supervisor observed about one traced call, which guest/record.c turns
 * into a record.  All multi-byte fields are little-endian.
 *
 *   byte 0     the builder: FUZZ_RECORD_* (modulo FUZZ_RECORD_N_BUILDERS)
 *   byte 1     FUZZ_RECORD_F_* flags
 *   byte 2     the action: bit 0 set EMULATE, else CONTINUE (a denial is
 *              always DENY, and only a denial)
 *   byte 3     msg_copy_read's return: an index (modulo 6) into
 *              fuzz_record_copy_errs
 *   4-7        system call number
 *   8-11       the fd the call names (as passed: any value)
 *   12-15      addrlen / msg_namelen as passed (any value)
 *   16-19      send flags
 *   20-31      the socket's family, type, protocol
 *   32-33      exe length (at most 4096)         34-35 argv length (4096)
 *   36-37      execve path length, as int16: negative is unreadable (4095)
 *   38-39      execve argv length (4096)
 *   40         bytes read at the address (128)   41 peer length (128)
 *   42         local length (128)                43 msg name length (128)
 *   44-47      data bytes read (65536, the supervisor's emulation cap)
 *   48-55      data length the call asked for
 *   56-59      sendmmsg entry index              60-63 vlen
 *   64-67      deny reason                       68-71 pidfd_getfd errno
 *   72-79      the address pointer (0: none)
 *   rest       content: every string, address and payload is filled by
 *              cycling through it (zeros when empty)
 *
 * Lengths beyond a bound are clamped to it: the supervisor's buffers are
 * that large, so the builders never see more. */
#pragma once

#include <errno.h>
#include <stdint.h>

#define FUZZ_RECORD_HEADER 80

enum {
  FUZZ_RECORD_DENY,
  FUZZ_RECORD_SOCKET,
  FUZZ_RECORD_CONNECT_BIND,
  FUZZ_RECORD_FD_CALL,
  FUZZ_RECORD_SENDTO,
  FUZZ_RECORD_MESSAGE,
  FUZZ_RECORD_MMSG_EMPTY,
  FUZZ_RECORD_WRITE,
  FUZZ_RECORD_EXEC,
  FUZZ_RECORD_N_BUILDERS,
};

#define FUZZ_RECORD_F_PROC_OK 0x01      /* /proc was readable */
#define FUZZ_RECORD_F_SOCKET 0x02       /* the fd is a socket */
#define FUZZ_RECORD_F_NO_DUP 0x04       /* pidfd_getfd failed */
#define FUZZ_RECORD_F_ADDR_OK 0x08      /* the address could be read */
#define FUZZ_RECORD_F_DATA_OK 0x10      /* the data could be read */
#define FUZZ_RECORD_F_INDEXED 0x20      /* an entry of sendmmsg */
#define FUZZ_RECORD_F_NAMED 0x40        /* the msghdr names an address */
#define FUZZ_RECORD_F_NATIVE_SOCKET 0x80 /* a denied socket() of the native ABI */

static const int fuzz_record_copy_errs[] = { 0, -EFAULT, -EINVAL, -EMSGSIZE, -ENOBUFS, -ENOMEM };
