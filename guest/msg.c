/* See msg.h.  No libc beyond memory and string functions, so it builds
 * into the host's fuzzer unchanged. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "msg.h"

static uint64_t
le64 (const uint8_t *p)
{
  uint64_t v = 0;

  for (int i = 7; i >= 0; i--)
    v = (v << 8) | p[i];
  return v;
}

static uint32_t
le32 (const uint8_t *p)
{
  return (uint32_t) p[0] | ((uint32_t) p[1] << 8) | ((uint32_t) p[2] << 16)
         | ((uint32_t) p[3] << 24);
}

int
msg_read_exact (const struct msg_mem *m, uint64_t addr, void *buf, size_t len)
{
  size_t got = 0;

  if (len == 0)
    return 0;
  if (addr + len < addr)
    return -EFAULT;
  while (got < len)
    {
      ssize_t n = m->read (m->ctx, addr + got, (uint8_t *) buf + got, len - got);

      if (n <= 0 || (size_t) n > len - got)
        return -EFAULT;
      got += (size_t) n;
    }
  return 0;
}

/* The iovec array: every length is checked before any data is read, as
 * lib/iov_iter.c iovec_from_user / __import_iovec do (EINVAL for a negative
 * ssize_t length; the total is clamped to MAX_RW_COUNT). */
static int
read_iovecs (const struct msg_mem *m, uint64_t iov_addr, uint64_t iovcnt, uint64_t **ret_vec,
             uint64_t *ret_total)
{
  uint64_t *vec, total = 0;
  int r;

  *ret_vec = NULL;
  *ret_total = 0;
  if (iovcnt > MSG_UIO_MAXIOV)
    return -EMSGSIZE;
  if (iovcnt == 0)
    return 0;
  vec = malloc ((size_t) iovcnt * MSG_IOVEC_SIZE);
  if (!vec)
    return -ENOMEM;
  r = msg_read_exact (m, iov_addr, vec, (size_t) iovcnt * MSG_IOVEC_SIZE);
  if (r < 0)
    {
      free (vec);
      return -EFAULT;
    }
  for (uint64_t i = 0; i < iovcnt; i++)
    {
      uint64_t len = le64 ((const uint8_t *) &vec[2 * i + 1]);

      vec[2 * i] = le64 ((const uint8_t *) &vec[2 * i]);
      if ((int64_t) len < 0)
        {
          free (vec);
          return -EINVAL;
        }
      if (len > MSG_MAX_RW_COUNT - total)
        len = MSG_MAX_RW_COUNT - total;
      vec[2 * i + 1] = len;
      total += len;
    }
  *ret_vec = vec;
  *ret_total = total;
  return 0;
}

/* Copies at most @cap bytes of the data @vec describes. */
static int
gather (const struct msg_mem *m, const uint64_t *vec, uint64_t iovcnt, size_t cap,
        struct msg_data *out)
{
  for (uint64_t i = 0; i < iovcnt && out->len < cap; i++)
    {
      uint64_t want = vec[2 * i + 1];

      if (want > cap - out->len)
        want = cap - out->len;
      if (want > 0)
        {
          uint8_t *grown = realloc (out->bytes, out->len + (size_t) want);

          if (!grown)
            return -ENOMEM;
          out->bytes = grown;
          if (msg_read_exact (m, vec[2 * i], out->bytes + out->len, (size_t) want) < 0)
            return -EFAULT;
          out->len += (size_t) want;
        }
    }
  return 0;
}

int
msg_gather_iov (const struct msg_mem *m, uint64_t iov_addr, uint64_t iovcnt, size_t cap,
                struct msg_data *out)
{
  uint64_t *vec;
  int r;

  memset (out, 0, sizeof *out);
  r = read_iovecs (m, iov_addr, iovcnt, &vec, &out->total);
  if (r < 0)
    return r;
  r = gather (m, vec, iovcnt, cap, out);
  free (vec);
  return r;
}

int
msg_copy_read (const struct msg_mem *m, uint64_t addr, size_t data_cap, bool want_control,
               struct msg_copy *out)
{
  uint8_t hdr[MSG_MSGHDR_SIZE];
  int r;

  memset (out, 0, sizeof *out);
  r = msg_read_exact (m, addr, hdr, sizeof hdr);
  if (r < 0)
    return -EFAULT;
  out->name_addr = le64 (hdr);
  out->namelen = (int32_t) le32 (hdr + 8);
  out->iov_addr = le64 (hdr + 16);
  out->iovlen = le64 (hdr + 24);
  out->control_addr = le64 (hdr + 32);
  out->controllen = le64 (hdr + 40);
  out->flags = le32 (hdr + 48);

  /* net/socket.c __copy_msghdr: no name means length 0; a negative length
   * is EINVAL; more than a sockaddr_storage is clamped; a name is used
   * only when both pointer and length are non-zero. */
  if (out->name_addr == 0)
    out->namelen = 0;
  if (out->namelen < 0)
    return -EINVAL;
  out->named = out->name_addr != 0 && out->namelen != 0;
  if (out->named)
    {
      out->name_len = (size_t) out->namelen > MSG_SOCKADDR_MAX ? MSG_SOCKADDR_MAX
                                                                : (size_t) out->namelen;
      r = msg_read_exact (m, out->name_addr, out->name, out->name_len);
      if (r < 0)
        return -EFAULT;
    }

  /* ____sys_sendmsg's order: the iovec array (copy_msghdr_from_user), the
   * control buffer, and only then the data (the protocol's copy). */
  {
    uint64_t *vec;

    r = read_iovecs (m, out->iov_addr, out->iovlen, &vec, &out->data.total);
    if (r < 0)
      return r;
    if (want_control && out->controllen > 0)
      {
        /* Above INT_MAX is ENOBUFS, and the buffer comes from sock_kmalloc,
         * which refuses a size not below optmem_max (less on a socket that
         * already holds option memory: the kernel decides that part). */
        if (out->controllen >= MSG_OPTMEM_MAX)
          r = -ENOBUFS;
        else if (!(out->control = malloc ((size_t) out->controllen)))
          r = -ENOMEM;
        else if (msg_read_exact (m, out->control_addr, out->control, (size_t) out->controllen) < 0)
          r = -EFAULT;
      }
    if (r == 0)
      r = gather (m, vec, out->iovlen, data_cap, &out->data);
    free (vec);
    return r;
  }
}

void
msg_copy_clear (struct msg_copy *c)
{
  free (c->control);
  free (c->data.bytes);
  c->control = NULL;
  c->data.bytes = NULL;
}

int
msg_sockaddr_port (const uint8_t *sa, size_t len)
{
  uint16_t family;

  if (len < 4)
    return -1;
  family = (uint16_t) (sa[0] | (sa[1] << 8));
  /* AF_UNSPEC (0), AF_INET (2), AF_INET6 (10): the port is bytes 2-3 in
   * network order in all three. */
  if (family != 0 && family != 2 && family != 10)
    return -1;
  return (sa[2] << 8) | sa[3];
}
