/* libFuzzer harness for the supervisor's reader of a traced process's
 * msghdr, mmsghdr and iovec arrays (guest/msg.c).
 *
 * The input describes a fake address space (see fuzz-msghdr.h): a base,
 * the mapped bytes, a hole of unmapped pages, a page size at which reads
 * may come back short, and what a read of an unmapped address returns.
 * The harness then runs msg_copy_read on each mmsghdr entry at an address
 * from the input, with and without the control buffer and with data caps
 * 0, 1, one from the input, 4096 and 65536; msg_gather_iov directly on
 * another address; and msg_sockaddr_port on bytes of the input and on
 * every name copied.
 *
 * Besides the sanitizers' findings, it aborts when an invariant breaks:
 *   - the reader is never asked for 0 bytes, for a range that wraps past
 *     2^64, or for more than the largest thing the call may read (the cap,
 *     a header, a sockaddr_storage, optmem_max); it never serves more bytes
 *     than the header, the name, the iovec array, the cap and the control
 *     buffer add up to;
 *   - the return value is one of 0, -EFAULT, -EINVAL, -EMSGSIZE, -ENOBUFS,
 *     -ENOMEM, and is the one an independent model of sendmsg(2)'s checks
 *     (below: model_copy, model_gather) gives for the same memory;
 *   - on success: data.len <= cap, data.len <= data.total <= 0x7ffff000,
 *     the data is the bytes the iovecs point at (in the fake memory),
 *     named == (name_addr != 0 && namelen != 0), name_len ==
 *     min (namelen, 128) and the name is the memory's bytes, the control
 *     buffer is copied exactly when asked for with controllen in
 *     1..20479, and is the memory's bytes;
 *   - on any return the header fields read so far are the memory's, and
 *     msg_copy_clear frees everything (twice is harmless);
 *   - msg_sockaddr_port returns -1 or a port, -1 below 4 bytes, and the
 *     big-endian bytes 2-3 exactly for families 0, 2 and 10.
 *
 * The model's notion of readable: a range is readable when every byte is
 * mapped and it does not reach the end of the address space (addr + len
 * must not wrap, as with access_ok). */
#include "config.h"

#include "msg.h"

#include "fuzz-msghdr.h"
#include "fuzz-util.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

typedef struct {
  guint64 base;
  const guint8 *mem;       /* an exact-size copy: ASan sees its extent */
  guint64 size;
  guint shift;             /* page size 1 << shift */
  guint64 hole_first;      /* unmapped pages, relative to the base's page */
  guint64 hole_end;
  guint fault;             /* FUZZ_MSGHDR_FAULT_* */
  gboolean page_stop;
  gboolean random_short;
  guint64 rng;
  /* per call */
  guint64 max_request;
  guint64 served;
} FakeMem;

static guint64
le64_at (const guint8 *p)
{
  guint64 v;

  memcpy (&v, p, 8);
  return GUINT64_FROM_LE (v);
}

static guint32
le32_at (const guint8 *p)
{
  guint32 v;

  memcpy (&v, p, 4);
  return GUINT32_FROM_LE (v);
}

static guint64
rel_page (const FakeMem *f, guint64 addr)
{
  return (addr >> f->shift) - (f->base >> f->shift);
}

static gboolean
byte_mapped (const FakeMem *f, guint64 addr)
{
  guint64 page;

  if (addr < f->base || addr - f->base >= f->size)
    return FALSE;
  page = rel_page (f, addr);
  return page < f->hole_first || page >= f->hole_end;
}

/* The model: can [addr, addr + len) be read whole? */
static gboolean
range_readable (const FakeMem *f, guint64 addr, guint64 len)
{
  guint64 first, last;

  if (len == 0)
    return TRUE;
  if (addr + len < addr)
    return FALSE;
  if (addr < f->base || addr - f->base > f->size || len > f->size - (addr - f->base))
    return FALSE;
  first = rel_page (f, addr);
  last = rel_page (f, addr + len - 1);
  return f->hole_first == f->hole_end || last < f->hole_first || first >= f->hole_end;
}

static const guint8 *
mem_at (const FakeMem *f, guint64 addr)
{
  return f->mem + (addr - f->base);
}

static ssize_t
fake_read (void *ctx, uint64_t addr, void *buf, size_t len)
{
  FakeMem *f = ctx;
  guint64 n, page, in_page;

  fuzz_check (len > 0);
  fuzz_check (len <= f->max_request);
  fuzz_check (addr + len > addr);   /* never a range that wraps */

  if (!byte_mapped (f, addr))
    switch (f->fault)
      {
      case FUZZ_MSGHDR_FAULT_EFAULT:
        return -EFAULT;
      case FUZZ_MSGHDR_FAULT_ZERO:
        return 0;
      case FUZZ_MSGHDR_FAULT_EIO:
        return -EIO;
      default:
        return (ssize_t) len + 1;
      }

  n = MIN ((guint64) len, f->size - (addr - f->base));
  page = rel_page (f, addr);
  in_page = addr & ((G_GUINT64_CONSTANT (1) << f->shift) - 1);
  /* short at the first unmapped page, like process_vm_readv */
  if (page < f->hole_first && f->hole_first < f->hole_end)
    n = MIN (n, ((f->hole_first - page) << f->shift) - in_page);
  if (f->page_stop)
    n = MIN (n, (G_GUINT64_CONSTANT (1) << f->shift) - in_page);
  if (f->random_short && n > 1)
    n = 1 + fuzz_splitmix64 (&f->rng) % n;
  fuzz_check (n >= 1);
  memcpy (buf, mem_at (f, addr), (size_t) n);
  f->served += n;
  return (ssize_t) n;
}

/* ---- the model: sendmsg(2)'s checks, from the kernel's order ---- */

/* The kernel's order: the whole iovec array is copied and every length
 * checked (iovec_from_user) before any data is read. */
static int
model_iovecs (const FakeMem *f, guint64 iov_addr, guint64 iovcnt, guint64 *total)
{
  *total = 0;
  if (iovcnt > MSG_UIO_MAXIOV)
    return -EMSGSIZE;
  if (iovcnt > 0 && (iov_addr + iovcnt * MSG_IOVEC_SIZE < iov_addr
                     || !range_readable (f, iov_addr, iovcnt * MSG_IOVEC_SIZE)))
    return -EFAULT;
  for (guint64 i = 0; i < iovcnt; i++)
    {
      guint64 len = le64_at (mem_at (f, iov_addr + i * MSG_IOVEC_SIZE + 8));

      if (len > (guint64) G_MAXINT64)
        return -EINVAL;
      *total += MIN (len, MSG_MAX_RW_COUNT - *total);
    }
  return 0;
}

/* The data, once the array is known good: at most @cap bytes. */
static int
model_data (const FakeMem *f, guint64 iov_addr, guint64 iovcnt, gsize cap, GByteArray *data)
{
  guint64 total = 0;

  for (guint64 i = 0; i < iovcnt && data->len < cap; i++)
    {
      guint64 at = iov_addr + i * MSG_IOVEC_SIZE;
      guint64 base = le64_at (mem_at (f, at));
      guint64 len = MIN (le64_at (mem_at (f, at + 8)), MSG_MAX_RW_COUNT - total);
      guint64 want = MIN (len, (guint64) (cap - data->len));

      total += len;
      if (!range_readable (f, base, want))
        return -EFAULT;
      if (want > 0)
        g_byte_array_append (data, mem_at (f, base), (guint) want);
    }
  return 0;
}

static int
model_gather (const FakeMem *f, guint64 iov_addr, guint64 iovcnt, gsize cap, GByteArray *data,
              guint64 *total)
{
  int r = model_iovecs (f, iov_addr, iovcnt, total);

  return r < 0 ? r : model_data (f, iov_addr, iovcnt, cap, data);
}

typedef struct {
  int ret;
  gboolean have_header;
  guint64 name_addr, iov_addr, iovlen, control_addr, controllen;
  gint32 namelen;
  guint32 flags;
  gboolean named;
  gsize name_len;
  gboolean name_read;
  GByteArray *data;
  guint64 total;
  gboolean data_done;
  const guint8 *control;   /* into the fake memory, when copied */
} Model;

static int
model_copy (const FakeMem *f, guint64 addr, gsize cap, gboolean want_control, Model *e)
{
  const guint8 *h;
  int r;

  if (!range_readable (f, addr, MSG_MSGHDR_SIZE))
    return -EFAULT;
  h = mem_at (f, addr);
  e->have_header = TRUE;
  e->name_addr = le64_at (h);
  e->namelen = (gint32) le32_at (h + 8);
  e->iov_addr = le64_at (h + 16);
  e->iovlen = le64_at (h + 24);
  e->control_addr = le64_at (h + 32);
  e->controllen = le64_at (h + 40);
  e->flags = le32_at (h + 48);

  if (e->name_addr == 0)
    e->namelen = 0;
  if (e->namelen < 0)
    return -EINVAL;
  e->named = e->name_addr != 0 && e->namelen != 0;
  if (e->named)
    {
      e->name_len = MIN ((gsize) e->namelen, (gsize) MSG_SOCKADDR_MAX);
      if (!range_readable (f, e->name_addr, e->name_len))
        return -EFAULT;
      e->name_read = TRUE;
    }
  /* ____sys_sendmsg: iovec array, then control, then the data. */
  r = model_iovecs (f, e->iov_addr, e->iovlen, &e->total);
  if (r < 0)
    return r;
  if (want_control && e->controllen > 0)
    {
      if (e->controllen >= MSG_OPTMEM_MAX)
        return -ENOBUFS;
      if (!range_readable (f, e->control_addr, e->controllen))
        return -EFAULT;
      e->control = mem_at (f, e->control_addr);
    }
  r = model_data (f, e->iov_addr, e->iovlen, cap, e->data);
  if (r < 0)
    return r;
  e->data_done = TRUE;
  return 0;
}

/* ---- checks ---- */

static gboolean
known_errno (int r)
{
  return r == 0 || r == -EFAULT || r == -EINVAL || r == -EMSGSIZE || r == -ENOBUFS
         || r == -ENOMEM;
}

static void
check_port (const guint8 *bytes, gsize len)
{
  /* an exact-size copy, NULL for no bytes */
  g_autofree guint8 *sa = len ? g_memdup2 (bytes, len) : NULL;
  int port = msg_sockaddr_port (sa, len);
  guint16 family;

  fuzz_check (port == -1 || (port >= 0 && port <= 65535));
  if (len < 4)
    {
      fuzz_check (port == -1);
      return;
    }
  family = (guint16) (bytes[0] | (bytes[1] << 8));
  if (family == 0 || family == 2 || family == 10)
    fuzz_check (port == ((bytes[2] << 8) | bytes[3]));
  else
    fuzz_check (port == -1);
}

static void
check_copy (FakeMem *f, guint64 addr, gsize cap, gboolean want_control)
{
  static const guint8 zeros[MSG_SOCKADDR_MAX] = { 0 };
  struct msg_copy c;
  Model e = { 0 };
  int r, expected;
  guint64 bound;

  e.data = g_byte_array_new ();
  expected = model_copy (f, addr, cap, want_control, &e);

  /* The largest single read: the data cap, a name, the whole iovec
   * array (read at once, like the kernel's copy), or the control buffer. */
  f->max_request = MAX ((guint64) cap, (guint64) MSG_UIO_MAXIOV * MSG_IOVEC_SIZE);
  if (want_control)
    f->max_request = MAX (f->max_request, (guint64) MSG_OPTMEM_MAX);
  f->served = 0;
  memset (&c, 0xa5, sizeof c);
  r = msg_copy_read (&(struct msg_mem) { fake_read, f }, addr, cap, want_control, &c);

  fuzz_check (known_errno (r));
  if (r != expected)
    fprintf (stderr, "msg_copy_read (0x%" G_GINT64_MODIFIER "x, cap %zu, control %d) = %d, "
             "expected %d\n", addr, cap, want_control, r, expected);
  fuzz_check (r == expected);

  /* what was read, whatever the outcome */
  bound = MSG_MSGHDR_SIZE + MSG_SOCKADDR_MAX + (guint64) MSG_IOVEC_SIZE * MSG_UIO_MAXIOV + cap
          + (want_control ? MSG_OPTMEM_MAX : 0);
  fuzz_check (f->served <= bound);
  fuzz_check (c.data.len <= cap);
  fuzz_check (c.data.total <= MSG_MAX_RW_COUNT);
  fuzz_check (c.name_len <= MSG_SOCKADDR_MAX);
  if (!e.have_header)
    {
      fuzz_check (r == -EFAULT);
      fuzz_check (!c.named && c.name_len == 0 && c.control == NULL && c.data.bytes == NULL
                  && c.data.len == 0);
    }
  else
    {
      fuzz_check (c.name_addr == e.name_addr);
      fuzz_check (c.namelen == e.namelen);
      fuzz_check (c.iov_addr == e.iov_addr && c.iovlen == e.iovlen);
      fuzz_check (c.control_addr == e.control_addr && c.controllen == e.controllen);
      fuzz_check (c.flags == e.flags);
      fuzz_check (c.named == e.named);
      fuzz_check (c.name_len == e.name_len);
    }
  if (e.name_read)
    fuzz_check (memcmp (c.name, mem_at (f, e.name_addr), e.name_len) == 0);
  if (e.data_done)
    {
      fuzz_check (c.data.total == e.total);
      fuzz_check (c.data.len == e.data->len);
      fuzz_check (e.data->len == 0 || memcmp (c.data.bytes, e.data->data, e.data->len) == 0);
    }

  if (r == 0)
    {
      fuzz_check (c.data.len <= c.data.total);
      fuzz_check ((c.data.len == 0) == (c.data.bytes == NULL));
      fuzz_check (c.named == (c.name_addr != 0 && c.namelen != 0));
      if (c.named)
        fuzz_check (c.name_len == MIN ((gsize) c.namelen, (gsize) MSG_SOCKADDR_MAX));
      else
        fuzz_check (c.name_len == 0);
      fuzz_check (memcmp (c.name + c.name_len, zeros, MSG_SOCKADDR_MAX - c.name_len) == 0);
      fuzz_check ((c.control != NULL)
                  == (want_control && c.controllen >= 1 && c.controllen <= MSG_OPTMEM_MAX));
      if (c.control)
        fuzz_check (memcmp (c.control, e.control, (size_t) c.controllen) == 0);
      /* what the supervisor does with a name: its port */
      if (c.named)
        check_port (c.name, c.name_len);
      /* nothing beyond what was asked for */
      fuzz_check (f->served == MSG_MSGHDR_SIZE + c.name_len
                  + (guint64) MSG_IOVEC_SIZE * c.iovlen + c.data.len
                  + (c.control ? c.controllen : 0));
    }

  msg_copy_clear (&c);
  fuzz_check (c.control == NULL && c.data.bytes == NULL);
  msg_copy_clear (&c);
  g_byte_array_unref (e.data);
}

static void
check_gather (FakeMem *f, guint64 iov_addr, guint64 iovcnt, gsize cap)
{
  struct msg_data d;
  g_autoptr (GByteArray) expected_data = g_byte_array_new ();
  guint64 total;
  int r, expected;

  expected = model_gather (f, iov_addr, iovcnt, cap, expected_data, &total);
  f->max_request = MAX ((guint64) cap, (guint64) MSG_UIO_MAXIOV * MSG_IOVEC_SIZE);
  f->served = 0;
  memset (&d, 0xa5, sizeof d);
  r = msg_gather_iov (&(struct msg_mem) { fake_read, f }, iov_addr, iovcnt, cap, &d);

  fuzz_check (known_errno (r) && r != -ENOBUFS);
  if (r != expected)
    fprintf (stderr, "msg_gather_iov (0x%" G_GINT64_MODIFIER "x, %" G_GUINT64_FORMAT
             ", cap %zu) = %d, expected %d\n", iov_addr, iovcnt, cap, r, expected);
  fuzz_check (r == expected);
  fuzz_check (d.len <= cap);
  fuzz_check (d.total <= MSG_MAX_RW_COUNT);
  fuzz_check (f->served <= (guint64) MSG_IOVEC_SIZE * MSG_UIO_MAXIOV + cap);
  if (r == 0)
    {
      fuzz_check (d.len <= d.total);
      fuzz_check (d.total == total);
      fuzz_check (d.len == expected_data->len);
      fuzz_check ((d.len == 0) == (d.bytes == NULL));
      fuzz_check (d.len == 0 || memcmp (d.bytes, expected_data->data, d.len) == 0);
      fuzz_check (f->served == (guint64) MSG_IOVEC_SIZE * iovcnt + d.len);
    }
  /* msg.h does not say the caller owns d.bytes after a failure, but it
   * may be allocated then (calls.c frees it either way) */
  free (d.bytes);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static const gsize fixed_caps[] = { 0, 1, 4096, 65536 };
  FakeMem f = { 0 };
  g_autofree guint8 *mem = NULL;
  guint64 base_choice, msg_off, iov_off, iovcnt, msg_addr;
  gsize cap, mem_size;
  guint entries;

  if (size < FUZZ_MSGHDR_HEADER)
    return 0;
  mem_size = size - FUZZ_MSGHDR_HEADER;
  mem = mem_size ? g_memdup2 (data + FUZZ_MSGHDR_HEADER, mem_size) : NULL;

  base_choice = fuzz_msghdr_bases[data[0] % G_N_ELEMENTS (fuzz_msghdr_bases)];
  if (base_choice == FUZZ_MSGHDR_BASE_TOP)
    f.base = 0 - (guint64) mem_size;
  else if (base_choice == FUZZ_MSGHDR_BASE_RAW)
    f.base = le64_at (data + 8);
  else
    f.base = base_choice;
  f.size = mem_size;
  if (f.base != 0 && f.size > 0 - f.base)
    f.size = 0 - f.base;   /* nothing mapped past 2^64 */
  f.mem = mem;
  f.shift = data[1] % 13;
  f.hole_first = data[2];
  f.hole_end = (guint64) data[2] + data[3];
  f.fault = data[4] & 3;
  f.page_stop = (data[4] & FUZZ_MSGHDR_PAGE_STOP) != 0;
  f.random_short = (data[4] & FUZZ_MSGHDR_RANDOM_SHORT) != 0;
  f.rng = fuzz_input_hash (data, size);
  entries = 1 + (data[5] & 3);
  msg_off = le64_at (data + 16);
  iov_off = le64_at (data + 24);
  iovcnt = le64_at (data + 32);
  cap = (gsize) (le64_at (data + 40) & FUZZ_MSGHDR_CAP_MASK);
  msg_addr = f.base + msg_off;

  /* sendmmsg: one msghdr per 64-byte entry (calls.c's arithmetic) */
  for (guint i = 0; i < entries; i++)
    {
      guint64 addr = msg_addr + (guint64) i * MSG_MMSGHDR_SIZE;

      for (guint want_control = 0; want_control < 2; want_control++)
        {
          check_copy (&f, addr, cap, want_control);
          for (gsize k = 0; k < G_N_ELEMENTS (fixed_caps); k++)
            check_copy (&f, addr, fixed_caps[k], want_control);
        }
    }

  check_gather (&f, f.base + iov_off, iovcnt, cap);
  check_gather (&f, f.base + iov_off, iovcnt, 0);
  check_gather (&f, f.base + iov_off, iovcnt, 65536);

  check_port (data + FUZZ_MSGHDR_HEADER, MIN ((gsize) data[6], mem_size));
  check_port (data, MIN ((gsize) data[6], size));
  return 0;
}
