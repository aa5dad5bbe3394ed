/* Writes the seed corpus of fuzz-record (tests/fuzz/corpus/record/): one
 * input per record builder with every length at its bound, and the odd
 * calls of issue 19 (several reasons for one record).
 *
 *   gen-record-corpus DIR           write the seeds into DIR
 *   gen-record-corpus --check DIR   exit 1 unless DIR holds exactly them
 *
 * The seeds are committed; the "fuzz" test suite runs --check so they
 * cannot drift from this program. */
#include "config.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>

#include "fuzz-record.h"
#include "corpus-seed.h"

typedef struct {
  guint8 header[FUZZ_RECORD_HEADER];
} Seed;

static void
put16 (Seed *s, gsize off, guint16 v)
{
  s->header[off] = (guint8) v;
  s->header[off + 1] = (guint8) (v >> 8);
}

static void
put32 (Seed *s, gsize off, guint32 v)
{
  for (int i = 0; i < 4; i++)
    s->header[off + i] = (guint8) (v >> (8 * i));
}

static void
put64 (Seed *s, gsize off, guint64 v)
{
  put32 (s, off, (guint32) v);
  put32 (s, off + 4, (guint32) (v >> 32));
}

/* A UDP socket on fd 3, the caller readable, nothing long yet. */
static void
base (Seed *s, guint builder, guint nr)
{
  memset (s, 0, sizeof *s);
  s->header[0] = (guint8) builder;
  s->header[1] = FUZZ_RECORD_F_PROC_OK | FUZZ_RECORD_F_SOCKET | FUZZ_RECORD_F_ADDR_OK
                 | FUZZ_RECORD_F_DATA_OK;
  s->header[2] = 1;   /* EMULATE */
  put32 (s, 4, nr);
  put32 (s, 8, 3);
  put32 (s, 12, 16);
  put32 (s, 20, 2);    /* AF_INET */
  put32 (s, 24, 2);    /* SOCK_DGRAM */
  put32 (s, 28, 17);   /* IPPROTO_UDP */
  put16 (s, 32, 12);
  put16 (s, 34, 12);
  s->header[40] = 16;
  s->header[43] = 16;
  put32 (s, 44, 5);
  put64 (s, 48, 5);
  put64 (s, 72, 0x1000);
}

/* Every long value at its bound. */
static void
longest (Seed *s)
{
  put16 (s, 32, 4096);
  put16 (s, 34, 4096);
  put16 (s, 36, 4095);
  put16 (s, 38, 4096);
  s->header[40] = 128;
  s->header[41] = 128;
  s->header[42] = 128;
  s->header[43] = 128;
  put32 (s, 44, 65536);
  put64 (s, 48, 1u << 20);
}

/* The finding: connect on fd -1 with an unreadable address, the caller
 * gone: three reasons. */
static void
seed_connect_three_reasons (Seed *s)
{
  base (s, FUZZ_RECORD_CONNECT_BIND, 42);
  s->header[1] = FUZZ_RECORD_F_NO_DUP;
  s->header[2] = 0;
  put32 (s, 8, 0xffffffffu);
  put32 (s, 68, 9);   /* EBADF */
}

static void
seed_sendmsg_devnull_efault (Seed *s)
{
  base (s, FUZZ_RECORD_MESSAGE, 46);
  s->header[1] = FUZZ_RECORD_F_PROC_OK;
  s->header[2] = 0;
  s->header[3] = 1;   /* -EFAULT */
  put32 (s, 8, 0);
}

static void
seed_sendmmsg_entry_longest (Seed *s)
{
  base (s, FUZZ_RECORD_MESSAGE, 307);
  longest (s);
  s->header[1] |= FUZZ_RECORD_F_NAMED | FUZZ_RECORD_F_INDEXED;
  put32 (s, 56, 1023);
  put32 (s, 60, 1024);
}

static void
seed_sendto_longest (Seed *s)
{
  base (s, FUZZ_RECORD_SENDTO, 44);
  longest (s);
  put32 (s, 12, 128);
}

static void
seed_sendto_nothing_readable (Seed *s)
{
  base (s, FUZZ_RECORD_SENDTO, 44);
  s->header[1] = FUZZ_RECORD_F_PROC_OK;
  put32 (s, 8, 0);
}

static void
seed_exec_longest (Seed *s)
{
  base (s, FUZZ_RECORD_EXEC, 59);
  longest (s);
  s->header[2] = 0;
}

static void
seed_exec_unreadable (Seed *s)
{
  base (s, FUZZ_RECORD_EXEC, 59);
  s->header[1] = 0;
  s->header[2] = 0;
  put16 (s, 36, 0xffff);   /* -1 */
}

static void
seed_write_longest (Seed *s)
{
  base (s, FUZZ_RECORD_WRITE, 1);
  longest (s);
  s->header[2] = 0;
}

static void
seed_fd_call_local (Seed *s)
{
  base (s, FUZZ_RECORD_FD_CALL, 50);
  longest (s);
  s->header[2] = 0;
}

static void
seed_deny_socket (Seed *s)
{
  base (s, FUZZ_RECORD_DENY, 41);
  longest (s);
  s->header[1] |= FUZZ_RECORD_F_NATIVE_SOCKET;
  put32 (s, 64, 3);   /* → reason 4, raw socket */
}

static void
seed_socket (Seed *s)
{
  base (s, FUZZ_RECORD_SOCKET, 41);
  s->header[2] = 0;
}

static void
seed_mmsg_empty_not_socket (Seed *s)
{
  base (s, FUZZ_RECORD_MMSG_EMPTY, 307);
  s->header[1] = 0;
  s->header[2] = 0;
}

static const struct {
  const char *name;
  void (*build) (Seed *s);
} seeds[] = {
  { "connect-three-reasons", seed_connect_three_reasons },
  { "sendmsg-devnull-efault", seed_sendmsg_devnull_efault },
  { "sendmmsg-entry-longest", seed_sendmmsg_entry_longest },
  { "sendto-longest", seed_sendto_longest },
  { "sendto-nothing-readable", seed_sendto_nothing_readable },
  { "exec-longest", seed_exec_longest },
  { "exec-unreadable", seed_exec_unreadable },
  { "write-longest", seed_write_longest },
  { "fd-call-local", seed_fd_call_local },
  { "deny-socket", seed_deny_socket },
  { "socket", seed_socket },
  { "sendmmsg-empty-not-socket", seed_mmsg_empty_not_socket },
};

/* The content every seed carries: a sockaddr_in to 192.0.2.1:53 (so the
 * payload of a send is kept, as DNS), then a DNS-looking query. */
static const guint8 content[] = {
  0x02, 0x00, 0x00, 0x35, 192, 0, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0,
  0x12, 0x34, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'c', 'o', 'm', 0, 0x00, 0x01, 0x00, 0x01,
};

/* Seed @i: its header, then the content every seed shares. */
static GByteArray *
build_seed (gsize i, const char **ret_name)
{
  GByteArray *bytes = g_byte_array_new ();
  Seed s;

  seeds[i].build (&s);
  g_byte_array_append (bytes, s.header, sizeof s.header);
  g_byte_array_append (bytes, content, sizeof content);
  *ret_name = seeds[i].name;
  return bytes;
}

static const CorpusSet record = { .n_seeds = G_N_ELEMENTS (seeds), .seed_build = build_seed };

int
main (int argc, char **argv)
{
  return corpus_seed_main (argc, argv, &record, 1);
}
