/* Writes the seed corpora of the guest parsers' harnesses:
 * fuzz-guest-spec (tests/fuzz/corpus/guest-spec/: run specs as the host
 * encodes them, lib/evidence/spec.c, and a few it never sends) and
 * fuzz-guest-passwd (tests/fuzz/corpus/guest-passwd/: flags, User,
 * /etc/passwd and /etc/group as fuzz-guest-passwd.c reads them).
 *
 *   gen-guest-corpus guest-spec|guest-passwd DIR           write the seeds
 *   gen-guest-corpus --check guest-spec|guest-passwd DIR   exit 1 unless DIR holds exactly them
 *
 * The seeds are committed; the "fuzz" test suite runs --check so they
 * cannot drift from this program. */
#include "config.h"

#include "evidence/spec.h"

#include <glib.h>
#include <stdio.h>
#include <string.h>
#include "corpus-seed.h"

static void
encode (GByteArray *out, const AirlockRunSpec *spec)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GBytes) bytes = airlock_run_spec_encode (spec, &error);

  if (!bytes)
    g_error ("seed spec does not encode: %s", error->message);
  g_byte_array_append (out, g_bytes_get_data (bytes, NULL), (guint) g_bytes_get_size (bytes));
}

static const char *const sh_argv[] = { "/bin/sh", "-c", "echo hi", NULL };
static const char *const env[] = { "PATH=/usr/bin:/bin", "HOME=/root", "EMPTY=", NULL };

/* The boot check's shape: a testroot path, no image. */
static void
spec_minimal (GByteArray *out)
{
  AirlockRunSpec spec = { .argv = sh_argv, .root = "/airlock/testroot", .timeout_ms = 30000 };

  encode (out, &spec);
}

/* An image run as `airlock gate` sends it: every field (the warped clock
 * included, the default). */
static void
spec_image (GByteArray *out)
{
  static const guint32 groups[] = { 10, 100, 4294967294u };
  AirlockRunSpec spec = {
    .argv = sh_argv, .envp = env, .cwd = "/srv", .uid = 1000, .gid = 1000,
    .groups = groups, .n_groups = G_N_ELEMENTS (groups), .root = "/airlock/image",
    .timeout_ms = 60000, .hostname = "worker", .root_disk = "airlock-root",
    .user = "app:staff", .stdio = TRUE, .controls = TRUE, .clock_ns = 1700000000000000000ull,
    .warp = TRUE,
  };

  encode (out, &spec);
}

/* `airlock shell`: a terminal and the static shell. */
static void
spec_shell (GByteArray *out)
{
  static const char *const argv[] = { "/bin/bash", NULL };
  AirlockRunSpec spec = {
    .argv = argv, .root = "/airlock/image", .timeout_ms = 1, .stdio = TRUE, .tty = TRUE,
    .tty_rows = 24, .tty_cols = 80, .shell_dir = "/airlock/shell",
  };

  encode (out, &spec);
}

static void
put_tlv (GByteArray *out, guint16 tag, const void *value, guint16 len)
{
  guint8 h[4] = { tag & 0xff, tag >> 8, len & 0xff, len >> 8 };

  g_byte_array_append (out, h, 4);
  g_byte_array_append (out, value, len);
}

/* What the host never sends: the guest's refusals. */
static void
spec_cut_short (GByteArray *out)
{
  spec_minimal (out);
  g_byte_array_set_size (out, out->len - 3);
}

static void
spec_unknown_tag (GByteArray *out)
{
  spec_minimal (out);
  put_tlv (out, 200, "x", 1);
}

static void
spec_bad_root (GByteArray *out)
{
  static const guint8 timeout[4] = { 1 };

  put_tlv (out, 96, "/bin/true", 9);
  put_tlv (out, 102, "/a,upperdir=/b", 14);
  put_tlv (out, 103, timeout, 4);
}

static void
spec_nul_in_string (GByteArray *out)
{
  spec_minimal (out);
  put_tlv (out, 97, "A=\0b", 4);
}

static const CorpusSeed spec_seeds[] = {
  { "minimal", spec_minimal },
  { "image", spec_image },
  { "shell", spec_shell },
  { "cut-short", spec_cut_short },
  { "unknown-tag", spec_unknown_tag },
  { "bad-root", spec_bad_root },
  { "nul-in-string", spec_nul_in_string },
};

/* fuzz-guest-passwd's input: flags (bit 0: passwd, bit 1: group), then
 * User \0 passwd \0 group. */
static void
passwd_input (GByteArray *out, guint8 flags, const char *user, const char *passwd,
              const char *group)
{
  g_byte_array_append (out, &flags, 1);
  g_byte_array_append (out, (const guint8 *) user, (guint) strlen (user) + 1);
  g_byte_array_append (out, (const guint8 *) passwd, (guint) strlen (passwd) + 1);
  g_byte_array_append (out, (const guint8 *) group, (guint) strlen (group));
}

static const char debian_passwd[] =
  "root:x:0:0:root:/root:/bin/bash\n"
  "daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n"
  "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
  "app:x:1000:1000:App,,,:/home/app:/bin/sh\n";
static const char debian_group[] =
  "root:x:0:\n"
  "daemon:x:1:\n"
  "staff:x:50:app\n"
  "docker:x:999:other,app\n"
  "nogroup:x:65534:\n"
  "app:x:1000:\n";

static void
passwd_named (GByteArray *out)
{
  passwd_input (out, 3, "app", debian_passwd, debian_group);
}

static void
passwd_named_group (GByteArray *out)
{
  passwd_input (out, 3, "app:staff", debian_passwd, debian_group);
}

static void
passwd_numeric (GByteArray *out)
{
  passwd_input (out, 3, "65534:50", debian_passwd, debian_group);
}

static void
passwd_unknown_uid (GByteArray *out)
{
  passwd_input (out, 3, "4242", debian_passwd, debian_group);
}

static void
passwd_no_files (GByteArray *out)
{
  passwd_input (out, 0, "app", "", "");
}

/* Busybox-style files: no trailing newline, short lines, CRLF. */
static void
passwd_odd_lines (GByteArray *out)
{
  passwd_input (out, 3 | (5 << 2), "svc:wheel",
                "root::0:0\r\nsvc:x:101:102::/:\nbad\n::\nsvc:x:oops:0",
                "wheel:x:10:root,svc\nsvc:x:102:svc");
}

static const CorpusSeed passwd_seeds[] = {
  { "named", passwd_named },
  { "named-group", passwd_named_group },
  { "numeric", passwd_numeric },
  { "unknown-uid", passwd_unknown_uid },
  { "no-files", passwd_no_files },
  { "odd-lines", passwd_odd_lines },
};

/* One corpus per harness: gen-guest-corpus [--check] guest-spec|guest-passwd DIR */
static const CorpusSet guest_corpora[] = {
  { "guest-spec", G_N_ELEMENTS (spec_seeds), spec_seeds },
  { "guest-passwd", G_N_ELEMENTS (passwd_seeds), passwd_seeds },
};

int
main (int argc, char **argv)
{
  return corpus_seed_main (argc, argv, guest_corpora, G_N_ELEMENTS (guest_corpora));
}
