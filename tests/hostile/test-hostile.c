/* The hostile sample image gated once per technique and arch, through the
 * case API's own GLib test integration (lib/testing): `-- COMMAND` picks
 * the technique (tests/hostile/techniques.h, and the hostile behaviours of
 * guest/behaviours.h).  Each case asserts what a release gate relies
 * on when an image fights back:
 *   - the verdict is `fail` — never `pass`, never silence;
 *   - the evidence is whole (the channel ended with its trailer): the
 *     technique did not blind the supervisor or the channel;
 *   - every flow in the host's capture is explained by a record: no packet
 *     left the VM behind the supervisor's back (a TOCTOU would show here);
 *   - the records the technique must leave are there (an attempt, or a
 *     denial), and none it must not leave;
 *   - the program says it ran as intended ("exit 0"): each evasion failed
 *     (a working evasion is a hole even where the verdict still fails).
 *
 * Paths: /ARCH/hostile/COMMAND.  Image: AIRLOCK_TEST_IMAGE (meson sets the
 * hostile image of this build). */
#define _GNU_SOURCE
#include "config.h"

#include <airlock.h>

#include <string.h>

#define NEEDLES_MAX 6

typedef struct {
  const char *command;
  guint arches;                       /* AMD64 | ARM64 */
  const char *needles[NEEDLES_MAX];   /* each in some attempt's line */
  const char *forbidden;              /* in no attempt's line */
  /* For every N in lo..hi, range_prefix N range_suffix (N an address's
   * last octet or a port) must appear in some attempt. */
  const char *range_prefix, *range_suffix;
  guint range_lo, range_hi;
  /* Per-arch extra needles (foreign ABIs exist on one arch only). */
  const char *amd64_needle;
} Technique;

#define AMD64 (1u << AIRLOCK_ARCH_AMD64)
#define ARM64 (1u << AIRLOCK_ARCH_ARM64)
#define BOTH (AMD64 | ARM64)

#define CANARY(n, port) "connect continue inet/stream/tcp 198.51.100." #n ":" #port

static const Technique techniques[] = {
  /* ---- foreign ABIs and system call numbers ---- */
  { "i386-int80", AMD64, { "i386:socketcall deny:foreign-abi", "i386:connect deny:foreign-abi" } },
  { "x32", AMD64, { "x32:socket deny:x32", "x32:connect deny:x32" } },
  { "aarch32", ARM64, { "arm:socket deny:foreign-abi", "arm:connect deny:foreign-abi" } },
  { "syscall-numbers", BOTH, { "connect continue inet/stream/tcp 198.51.100.3:7003" },
    .amd64_needle = "deny:x32" },

  /* ---- io_uring ---- */
  { "io-uring", BOTH, { "io_uring_setup deny:io-uring", "io_uring_enter deny:io-uring",
                        "io_uring_register deny:io-uring" } },
  { "io-uring-sqpoll", BOTH, { "io_uring_setup deny:io-uring" } },

  /* ---- egress however it is spelled ---- */
  { "sendmmsg-many", BOTH, { "sendmmsg emulate inet/dgram/udp 203.0.113.65:7001" },
    .range_prefix = "203.0.113.", .range_suffix = ":7001", .range_lo = 1, .range_hi = 64 },
  { "fastopen", BOTH, { "sendto continue inet/stream/tcp 192.0.2.1:80" } },
  { "udp-connected-sendto", BOTH, { "connect continue inet/dgram/udp 198.51.100.2:7002",
                                    "sendto continue inet/dgram/udp 203.0.113.2:7002" } },
  { "connect-v4mapped", BOTH, { "connect continue inet6/stream/tcp [::ffff:192.0.2.1]:9" } },
  { "dns-udp", BOTH, { "dns=example.com." } },
  { "raw-socket", BOTH, { "socket deny:raw-socket" } },
  { "packet-socket", BOTH, { "socket deny:packet-socket" } },
  { "vsock", BOTH, { "socket deny:vsock" } },
  { "sctp", BOTH, { "socket deny:sctp" } },

  /* ---- the destination rewritten during the call ---- */
  { "toctou-thread", BOTH, { ":7004" } },
  { "toctou-shared", BOTH, { ":7005" } },

  /* ---- escaping the supervisor ---- */
  { "clone-untraced", BOTH, { "clone deny:clone-untraced" } },
  { "clone3", BOTH, { "clone3 deny:clone3", CANARY (6, 7006) } },
  { "ptrace", BOTH, { "ptrace deny:ptrace" } },
  { "vm-writev", BOTH, { "process_vm_writev deny:process-vm-writev",
                         "connect continue inet/stream/tcp 198.51.100.7:7007" },
    .forbidden = "203.0.113.7" },
  { "seccomp-listener", BOTH, { "seccomp deny:seccomp-listener" } },
  { "fork-storm", BOTH, { NULL }, .range_prefix = "198.51.100.8:", .range_lo = 7100, .range_hi = 7163 },
  { "stop-storm", BOTH, { NULL }, .range_prefix = "198.51.100.9:", .range_lo = 7200, .range_hi = 7219 },
  { "kill-supervisor", BOTH, { CANARY (10, 7010) } },
  { "setuid-exec", BOTH, { "connect continue inet/stream/tcp 198.51.100.11:7011" }, .forbidden = ":7111" },

  /* ---- leaving the traced tree ---- */
  { "daemon", BOTH, { CANARY (12, 7012) } },
  { "late-child", BOTH, { CANARY (13, 7013) } },
  { "proc-writes", BOTH, { CANARY (23, 7023) } },
  { "stop-signal", BOTH, { CANARY (24, 7024) } },
  { "request-key", BOTH, { "request_key deny:keyring", "add_key deny:keyring", "keyctl deny:keyring" } },
  { "unix-outside", BOTH, { CANARY (19, 7019) } },

  /* ---- reaching the evidence ---- */
  { "evidence-port", BOTH, { CANARY (14, 7014) } },
  { "forge-frames", BOTH, { CANARY (15, 7015) } },
  { "stdout-flood", BOTH, { CANARY (16, 7016) }, .range_prefix = "198.51.100.16:", .range_lo = 7300,
    .range_hi = 7309 },
  { "disk-write", BOTH, { CANARY (21, 7021) } },
  { "image-nodes", BOTH, { CANARY (22, 7022) } },

  /* ---- what the workload sees ---- */
  { "env-leak", BOTH, { CANARY (17, 7017) } },
};

/* The attempts, one line each, for matching and for the failure report. */
static GPtrArray *
attempt_lines (AirlockResult *result)
{
  GPtrArray *attempts = airlock_result_get_attempts (result);
  GPtrArray *lines = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; i < attempts->len; i++)
    g_ptr_array_add (lines, airlock_attempt_to_string (attempts->pdata[i]));
  return lines;
}

static gboolean
some_line_has (GPtrArray *lines, const char *needle)
{
  for (guint i = 0; i < lines->len; i++)
    if (strstr (lines->pdata[i], needle))
      return TRUE;
  return FALSE;
}

/* Fails the test with @why and everything the run left, so a CI log
 * alone says what happened. */
static void
fail_with_report (AirlockTestFixture *f, const Technique *t, GPtrArray *lines, const char *why)
{
  GString *s = g_string_new (NULL);
  const char *const *reasons = airlock_result_get_reasons (f->result);
  GBytes *out = airlock_result_get_stdout (f->result);
  g_auto (GStrv) out_lines = NULL;
  /* A run that never got to the workload has no stdout (NULL data). */
  g_autofree char *out_text = out && g_bytes_get_size (out) > 0
                                ? g_strndup (g_bytes_get_data (out, NULL), MIN (g_bytes_get_size (out), 65536))
                                : g_strdup ("");

  g_string_append_printf (s, "%s on %s: %s\n  verdict %s; evidence %s\n", t->command,
                          airlock_arch_to_string (f->arch), why,
                          airlock_verdict_kind_to_string (airlock_result_get_verdict (f->result)),
                          airlock_result_is_complete (f->result)
                            ? "complete" : airlock_result_get_incomplete_reason (f->result));
  for (guint i = 0; reasons && reasons[i]; i++)
    g_string_append_printf (s, "  reason: %s\n", reasons[i]);
  for (guint i = 0; i < lines->len; i++)
    g_string_append_printf (s, "  attempt: %s\n", (const char *) lines->pdata[i]);
  out_lines = g_strsplit (out_text, "\n", -1);
  for (guint i = 0; out_lines[i]; i++)
    if (g_str_has_prefix (out_lines[i], "testprog: "))
      g_string_append_printf (s, "  stdout: %s\n", out_lines[i]);
  g_test_fail_printf ("%s", s->str);
  g_string_free (s, TRUE);
}

static void
test_technique (AirlockTestFixture *f, gconstpointer data)
{
  const Technique *t = data;
  const char *args[] = { t->command, NULL };
  g_autoptr (GPtrArray) lines = NULL;
  g_autofree char *exit_line = g_strdup_printf ("testprog: %s: exit 0\n", t->command);
  g_autofree char *skip_line = g_strdup_printf ("testprog: %s: exit 77\n", t->command);
  GPtrArray *flows;
  AirlockResult *result;
  GBytes *out;
  const char *out_data;
  gsize out_len;

  if (!(t->arches & (1u << f->arch)))
    {
      g_test_skip ("the technique does not exist on this arch");
      return;
    }
  airlock_case_set_args (f->kase, args);
  airlock_case_set_name (f->kase, t->command);
  result = airlock_test_run (f);
  if (!result)
    return;
  lines = attempt_lines (result);
  out = airlock_result_get_stdout (result);
  out_data = g_bytes_get_data (out, &out_len);

  /* A technique this machine cannot run (the AArch32 binary was not
   * built): said by the program, never a pass. */
  /* memmem: a technique may write NUL bytes (forged frames) to stdout. */
  if (out_len && memmem (out_data, out_len, skip_line, strlen (skip_line)))
    {
      g_test_skip ("the program says this technique cannot run here (exit 77)");
      return;
    }
  if (airlock_result_get_verdict (result) != AIRLOCK_VERDICT_FAIL)
    {
      fail_with_report (f, t, lines, "the verdict is not fail");
      return;
    }
  if (!airlock_result_is_complete (result))
    {
      fail_with_report (f, t, lines, "the evidence is not complete");
      return;
    }
  flows = airlock_result_get_flows (result);
  for (guint i = 0; i < flows->len; i++)
    {
      const AirlockResultFlow *flow = flows->pdata[i];

      if (!flow->attributed)
        {
          g_autofree char *why = g_strdup_printf ("the capture has a flow no record explains: %s",
                                                  flow->key);
          fail_with_report (f, t, lines, why);
          return;
        }
    }
  for (guint i = 0; i < NEEDLES_MAX && t->needles[i]; i++)
    if (!some_line_has (lines, t->needles[i]))
      {
        g_autofree char *why = g_strdup_printf ("no attempt matches '%s'", t->needles[i]);
        fail_with_report (f, t, lines, why);
        return;
      }
  if (f->arch == AIRLOCK_ARCH_AMD64 && t->amd64_needle && !some_line_has (lines, t->amd64_needle))
    {
      g_autofree char *why = g_strdup_printf ("no attempt matches '%s'", t->amd64_needle);
      fail_with_report (f, t, lines, why);
      return;
    }
  for (guint k = t->range_lo; t->range_prefix && k <= t->range_hi; k++)
    {
      g_autofree char *needle = g_strdup_printf ("%s%u%s", t->range_prefix, k,
                                                 t->range_suffix ? t->range_suffix : "");

      if (!some_line_has (lines, needle))
        {
          g_autofree char *why = g_strdup_printf ("no attempt matches '%s' (of %u-%u)", needle,
                                                  t->range_lo, t->range_hi);
          fail_with_report (f, t, lines, why);
          return;
        }
    }
  if (t->forbidden && some_line_has (lines, t->forbidden))
    {
      g_autofree char *why = g_strdup_printf ("an attempt matches '%s', which the technique must "
                                              "not reach", t->forbidden);
      fail_with_report (f, t, lines, why);
      return;
    }
  if (!out_len || !memmem (out_data, out_len, exit_line, strlen (exit_line)))
    {
      fail_with_report (f, t, lines, "the program does not say 'exit 0': an evasion worked, or it "
                                     "did not run as intended");
      return;
    }
}

int
main (int argc, char **argv)
{
  airlock_test_init (&argc, &argv);
  g_test_init (&argc, &argv, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (techniques); i++)
    {
      g_autofree char *path = g_strdup_printf ("/hostile/%s", techniques[i].command);

      airlock_test_add (path, &techniques[i], test_technique);
    }
  return g_test_run ();
}
