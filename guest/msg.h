/* Reading a traced process's msghdr, mmsghdr and iovec arrays.
 *
 * Pure code over a memory-reading callback, so the host can fuzz it with a
 * fake address space (tests/fuzz/fuzz-msghdr.c).  Layouts are the LP64
 * Linux ones, identical on x86_64 and aarch64 (struct msghdr is 56 bytes,
 * struct iovec 16, struct mmsghdr 64).  Every bound is the kernel's
 * (net/socket.c, lib/iov_iter.c, Linux 6.1): the errno a check returns is
 * the one the system call would return for the same bytes. */
#ifndef AIRLOCK_MSG_H
#define AIRLOCK_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define MSG_MSGHDR_SIZE 56
#define MSG_IOVEC_SIZE 16
#define MSG_MMSGHDR_SIZE 64
#define MSG_MMSG_LEN_OFFSET 56   /* msg_len in struct mmsghdr */
#define MSG_SOCKADDR_MAX 128     /* sizeof (struct sockaddr_storage) */
#define MSG_UIO_MAXIOV 1024
#define MSG_OPTMEM_MAX 20480     /* net.core.optmem_max's default: control this large → ENOBUFS */
#define MSG_MAX_RW_COUNT 0x7ffff000ull  /* INT_MAX & PAGE_MASK */

/* Reads up to @len bytes at @addr of the traced process.  Returns the
 * bytes read (short at an unmapped page) or -errno. */
typedef ssize_t (*msg_read_fn) (void *ctx, uint64_t addr, void *buf, size_t len);

struct msg_mem {
  msg_read_fn read;
  void *ctx;
};

/* Reads exactly @len bytes or returns -EFAULT. */
int msg_read_exact (const struct msg_mem *m, uint64_t addr, void *buf, size_t len);

struct msg_data {
  uint8_t *bytes;      /* malloc'd, data_len bytes (NULL when 0) */
  size_t len;          /* bytes copied: at most the cap */
  uint64_t total;      /* bytes the call would send (sum of iov_len, kernel-clamped) */
};

/* Gathers the data of @iovcnt iovecs at @iov_addr, copying at most @cap
 * bytes.  Returns 0, -EMSGSIZE (more than UIO_MAXIOV), -EINVAL (a length
 * that is negative as ssize_t, whatever the data), -EFAULT (unreadable
 * array, or data within the first @cap bytes) or -ENOMEM.  @out->bytes may
 * be allocated after a failure too: free it either way. */
int msg_gather_iov (const struct msg_mem *m, uint64_t iov_addr, uint64_t iovcnt, size_t cap,
                    struct msg_data *out);

struct msg_copy {
  uint64_t name_addr;
  int32_t namelen;         /* as passed */
  bool named;              /* name != NULL && namelen != 0: the kernel uses an address */
  uint8_t name[MSG_SOCKADDR_MAX];
  size_t name_len;         /* bytes copied: namelen clamped to 128 */
  uint64_t iov_addr, iovlen;
  uint64_t control_addr, controllen;
  uint8_t *control;        /* malloc'd copy when asked for, controllen bytes */
  uint32_t flags;          /* msg_flags (ignored by sendmsg) */
  struct msg_data data;
};

/* Reads the msghdr at @addr and what it points to: the name, the data (at
 * most @data_cap bytes) and, with @want_control, the control buffer.
 * Returns 0 or the -errno sendmsg(2) would fail with for these bytes
 * (-EFAULT, -EINVAL for a negative namelen or iov_len, -EMSGSIZE, -ENOBUFS
 * for a control buffer of optmem_max or more), checked in the kernel's
 * order (name, iovec array, control, data); or -ENOMEM.  Always clear @out
 * with msg_copy_clear(), whatever this returned. */
int msg_copy_read (const struct msg_mem *m, uint64_t addr, size_t data_cap, bool want_control,
                   struct msg_copy *out);
void msg_copy_clear (struct msg_copy *c);

/* Port (host order) of a sockaddr_in/sockaddr_in6 (or AF_UNSPEC read as
 * inet) in @len bytes, or -1 when it holds none. */
int msg_sockaddr_port (const uint8_t *sa, size_t len);

#endif /* AIRLOCK_MSG_H */
