/* Writes the seed corpus of fuzz-msghdr (tests/fuzz/corpus/msghdr/): a
 * fake address space (fuzz-msghdr.h) holding a well-formed sendmsg
 * message, and one input stopping at each check msg_copy_read and
 * msg_gather_iov make, plus holes, short reads and the top of the address
 * space.
 *
 *   gen-msghdr-corpus DIR           write the seeds into DIR
 *   gen-msghdr-corpus --check DIR   exit 1 unless DIR holds exactly them
 *
 * The seeds are committed; the "fuzz" test suite runs --check so they
 * cannot drift from this program. */
#include "config.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "fuzz-msghdr.h"
#include "corpus-seed.h"

#define MEM_SIZE 512
#define BASE UINT64_C (0x10000)

/* Offsets in the memory of the standard message's parts. */
enum {
  OFF_MSG = 0,      /* msghdr (and mmsghdr entries at 64, 128) */
  OFF_NAME = 192,   /* sockaddr_in */
  OFF_IOV = 224,    /* two iovecs */
  OFF_DATA = 256,   /* "hello" and a DNS query's first bytes */
  OFF_CTL = 320,    /* a cmsghdr */
};

typedef struct {
  guint8 header[FUZZ_MSGHDR_HEADER];
  guint8 mem[MEM_SIZE];
  gsize mem_len;
  guint64 base;
} Seed;

static void
put_le64 (guint8 *p, guint64 v)
{
  for (int i = 0; i < 8; i++)
    p[i] = (guint8) (v >> (8 * i));
}

static void
put_le32 (guint8 *p, guint32 v)
{
  for (int i = 0; i < 4; i++)
    p[i] = (guint8) (v >> (8 * i));
}

static void
msghdr_at (Seed *s, gsize off, guint64 name, gint32 namelen, guint64 iov, guint64 iovlen,
           guint64 control, guint64 controllen)
{
  put_le64 (s->mem + off, name);
  put_le32 (s->mem + off + 8, (guint32) namelen);
  put_le64 (s->mem + off + 16, iov);
  put_le64 (s->mem + off + 24, iovlen);
  put_le64 (s->mem + off + 32, control);
  put_le64 (s->mem + off + 40, controllen);
}

static void
iovec_at (Seed *s, gsize off, guint64 base, guint64 len)
{
  put_le64 (s->mem + off, base);
  put_le64 (s->mem + off + 8, len);
}

/* Base index 0 (0x10000), 4 KiB pages, no hole, process_vm_readv-like
 * reads; the message at offset 0, the gather on its iovec array with a
 * cap of 3. */
static void
seed_init (Seed *s)
{
  memset (s, 0, sizeof *s);
  s->base = BASE;
  s->mem_len = MEM_SIZE;
  s->header[1] = 12;
  s->header[6] = 16;
  put_le64 (s->header + 16, OFF_MSG);
  put_le64 (s->header + 24, OFF_IOV);
  put_le64 (s->header + 32, 2);
  put_le64 (s->header + 40, 3);
}

/* A DNS query to 192.0.2.53:53 with an SCM_RIGHTS-shaped control buffer. */
static void
standard_message (Seed *s)
{
  static const guint8 sin[16] = { 2, 0, 0, 53, 192, 0, 2, 53 };
  static const guint8 query[12] = { 0xbe, 0xef, 1, 0, 0, 1 };

  msghdr_at (s, OFF_MSG, s->base + OFF_NAME, 16, s->base + OFF_IOV, 2, s->base + OFF_CTL, 24);
  memcpy (s->mem + OFF_NAME, sin, sizeof sin);
  iovec_at (s, OFF_IOV, s->base + OFF_DATA, 5);
  iovec_at (s, OFF_IOV + 16, s->base + OFF_DATA + 16, sizeof query);
  memcpy (s->mem + OFF_DATA, "hello", 5);
  memcpy (s->mem + OFF_DATA + 16, query, sizeof query);
  put_le64 (s->mem + OFF_CTL, 20);   /* cmsg_len */
  put_le32 (s->mem + OFF_CTL + 8, 1);   /* SOL_SOCKET */
  put_le32 (s->mem + OFF_CTL + 12, 1);  /* SCM_RIGHTS */
  put_le32 (s->mem + OFF_CTL + 16, 3);
}

static void
seed_named (Seed *s)
{
  standard_message (s);
}

static void
seed_unnamed (Seed *s)
{
  standard_message (s);
  put_le64 (s->mem + OFF_MSG, 0);   /* NULL name, namelen 16: no address */
}

static void
seed_namelen_zero (Seed *s)
{
  standard_message (s);
  put_le32 (s->mem + OFF_MSG + 8, 0);
}

static void
seed_namelen_negative (Seed *s)
{
  standard_message (s);
  put_le32 (s->mem + OFF_MSG + 8, 0xffffffff);
}

static void
seed_namelen_clamped (Seed *s)
{
  standard_message (s);
  put_le32 (s->mem + OFF_MSG + 8, 200);   /* 128 bytes read, the rest ignored */
}

static void
seed_name_unmapped (Seed *s)
{
  standard_message (s);
  put_le64 (s->mem + OFF_MSG, s->base + MEM_SIZE - 8);
}

static void
seed_iovlen_maxiov (Seed *s)
{
  standard_message (s);
  put_le64 (s->mem + OFF_MSG + 24, 1025);
  put_le64 (s->header + 32, 1024);
}

static void
seed_iov_len_negative (Seed *s)
{
  standard_message (s);
  iovec_at (s, OFF_IOV + 16, s->base + OFF_DATA, G_GUINT64_CONSTANT (0x8000000000000000));
}

static void
seed_iov_total_clamped (Seed *s)
{
  standard_message (s);
  iovec_at (s, OFF_IOV, s->base + OFF_DATA, G_GUINT64_CONSTANT (0x7ffff000));
  iovec_at (s, OFF_IOV + 16, s->base + OFF_DATA, G_GUINT64_CONSTANT (0x7fffffffffffffff));
}

static void
seed_iov_data_unmapped (Seed *s)
{
  standard_message (s);
  iovec_at (s, OFF_IOV + 16, s->base + MEM_SIZE - 4, 64);
}

static void
seed_iov_null_empty (Seed *s)
{
  standard_message (s);
  iovec_at (s, OFF_IOV, 0, 0);
  put_le64 (s->mem + OFF_MSG + 16, 0);   /* msg_iov NULL with msg_iovlen 2 */
}

static void
seed_control_optmem (Seed *s)
{
  standard_message (s);
  put_le64 (s->mem + OFF_MSG + 40, 20481);
}

static void
seed_control_unmapped (Seed *s)
{
  standard_message (s);
  put_le64 (s->mem + OFF_MSG + 40, 20480);
}

/* 64-byte pages, pages 3-4 unmapped: the second iovec's data straddles
 * the hole; reads stop at every page. */
static void
seed_hole_page_stop (Seed *s)
{
  standard_message (s);
  s->header[1] = 6;
  s->header[2] = 3;
  s->header[3] = 2;
  s->header[4] = FUZZ_MSGHDR_PAGE_STOP;
  iovec_at (s, OFF_IOV + 16, s->base + 3 * 64 - 8, 16);
}

static void
seed_short_reads (Seed *s)
{
  standard_message (s);
  s->header[1] = 4;
  s->header[4] = FUZZ_MSGHDR_RANDOM_SHORT | FUZZ_MSGHDR_PAGE_STOP;
  put_le64 (s->header + 40, 65536);
}

static void
seed_fault_zero (Seed *s)
{
  seed_name_unmapped (s);
  s->header[4] = FUZZ_MSGHDR_FAULT_ZERO;
}

static void
seed_fault_too_many (Seed *s)
{
  seed_iov_data_unmapped (s);
  s->header[4] = FUZZ_MSGHDR_FAULT_TOO_MANY;
}

/* Memory ending at 2^64: the message at its end, an iovec array whose
 * second entry would wrap. */
static void
seed_top (Seed *s)
{
  guint64 top = 0 - (guint64) MEM_SIZE;

  s->header[0] = 2;
  s->base = top;
  standard_message (s);
  put_le64 (s->header + 16, MEM_SIZE - 64);
  msghdr_at (s, MEM_SIZE - 64, top + OFF_NAME, 16, G_GUINT64_CONSTANT (0xfffffffffffffff0), 2,
             top + OFF_CTL, 24);
  put_le64 (s->header + 24, MEM_SIZE - 16);
}

static void
seed_null_mapped (Seed *s)
{
  s->header[0] = 3;
  s->base = 0;
  standard_message (s);
  put_le64 (s->mem + OFF_MSG + 16, 0);
  put_le64 (s->mem + OFF_MSG + 24, 1);
  iovec_at (s, 0, 0, 8);   /* overlaps the msghdr: iov_base NULL, but mapped */
}

static void
seed_raw_base_unaligned (Seed *s)
{
  s->header[0] = 4;
  s->base = G_GUINT64_CONSTANT (0x7f0000000123);
  put_le64 (s->header + 8, s->base);
  standard_message (s);
}

/* Three mmsghdr entries: named, unnamed, refused. */
static void
seed_mmsg (Seed *s)
{
  standard_message (s);
  s->header[5] = 2;
  msghdr_at (s, 64, 0, 0, s->base + OFF_IOV, 1, 0, 0);
  msghdr_at (s, 128, s->base + OFF_NAME, -16, s->base + OFF_IOV, 1, 0, 0);
}

static void
seed_port_unspec (Seed *s)
{
  standard_message (s);
  s->mem[0] = 0;   /* the memory's first bytes, read as AF_UNSPEC */
  s->mem[1] = 0;
  s->header[6] = 4;
}

typedef void (*SeedFunc) (Seed *s);

typedef struct {
  const char *name;
  SeedFunc build;
} SeedSpec;

static const SeedSpec seeds[] = {
  { "named", seed_named },
  { "unnamed", seed_unnamed },
  { "namelen-zero", seed_namelen_zero },
  { "namelen-negative", seed_namelen_negative },
  { "namelen-clamped", seed_namelen_clamped },
  { "name-unmapped", seed_name_unmapped },
  { "iovlen-maxiov", seed_iovlen_maxiov },
  { "iov-len-negative", seed_iov_len_negative },
  { "iov-total-clamped", seed_iov_total_clamped },
  { "iov-data-unmapped", seed_iov_data_unmapped },
  { "iov-null-empty", seed_iov_null_empty },
  { "control-optmem", seed_control_optmem },
  { "control-unmapped", seed_control_unmapped },
  { "hole-page-stop", seed_hole_page_stop },
  { "short-reads", seed_short_reads },
  { "fault-zero", seed_fault_zero },
  { "fault-too-many", seed_fault_too_many },
  { "top", seed_top },
  { "null-mapped", seed_null_mapped },
  { "raw-base-unaligned", seed_raw_base_unaligned },
  { "mmsg", seed_mmsg },
  { "port-unspec", seed_port_unspec },
};

/* Seed @i: the header, then the fake address space the seed filled in. */
static GByteArray *
build_seed (gsize i, const char **ret_name)
{
  GByteArray *bytes = g_byte_array_new ();
  Seed s;

  seed_init (&s);
  seeds[i].build (&s);
  g_byte_array_append (bytes, s.header, sizeof s.header);
  g_byte_array_append (bytes, s.mem, (guint) s.mem_len);
  *ret_name = seeds[i].name;
  return bytes;
}

static const CorpusSet msghdr = { .n_seeds = G_N_ELEMENTS (seeds), .seed_build = build_seed };

int
main (int argc, char **argv)
{
  return corpus_seed_main (argc, argv, &msghdr, 1);
}
