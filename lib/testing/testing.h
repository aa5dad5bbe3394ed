/* GLib test integration: egress cases written as GLib tests, registered
 * once per architecture.
 *
 *   int main (int argc, char **argv)
 *   {
 *     airlock_test_init (&argc, &argv);   // first: --help lists its options
 *     g_test_init (&argc, &argv, NULL);
 *     airlock_test_add ("/server/no-egress", NULL, test_no_egress);
 *     return g_test_run ();
 *   }
 *
 *   static void
 *   test_no_egress (AirlockTestFixture *f, gconstpointer data)
 *   {
 *     AirlockResult *r = airlock_test_run (f);   // f->kase: the image given
 *     airlock_assert_no_egress (r);
 *   }
 *
 * airlock_test_add() registers "/amd64/server/no-egress" and
 * "/arm64/server/no-egress" (the arches selected).  The command line (or
 * the environment) says what to run:
 *
 *   --airlock-arch=LIST   amd64, arm64, all or a comma list   (AIRLOCK_TEST_ARCH; default all)
 *   --airlock-image=REF   the image each case starts from     (AIRLOCK_TEST_IMAGE)
 *   --airlock-out=DIR     keep each case's evidence bundle in DIR/ARCH/PATH; a
 *                         DIR that holds an earlier run gets DIR/run-N
 *                         (AIRLOCK_TEST_OUT; default: none)
 *   --airlock-connect=URI, --airlock-accel=auto|tcg|kvm   (AIRLOCK_CONNECT, AIRLOCK_TEST_ACCEL)
 *   --airlock-clock=warp|real  the guest's clock (AIRLOCK_TEST_CLOCK; default warp:
 *                         AirlockClock)
 *
 * An arch that cannot run here (no QEMU for it, its pinned guest kernel
 * unavailable) makes each of its cases skip with the reason; any other
 * session error (a broken install) and a missing image fail each case with
 * the message.  A case never passes, nor skips, on a broken setup.
 * One session per arch is shared by the cases of a test program. */
#pragma once

#include "../airlock-macros.h"
#include "../case/case.h"

G_BEGIN_DECLS

typedef struct {
  AirlockArch arch;
  /* The arch's shared session (borrowed). */
  AirlockSession *session;
  /* A fresh case for the image given (--airlock-image), with its bundle
   * directory set under --airlock-out; the test may change it before
   * airlock_test_run() / airlock_test_start().  Freed after the test. */
  AirlockCase *kase;
  /* The last result of airlock_test_run() / airlock_test_wait(), freed
   * after the test. */
  AirlockResult *result;
  /* The run of airlock_test_start(), freed (ended) after the test. */
  AirlockRun *run;
} AirlockTestFixture;

typedef void (*AirlockTestFunc) (AirlockTestFixture *fixture, gconstpointer user_data);

/* Takes airlock's options out of @argc/@argv; an option it does not
 * understand ends the program with a message.  Call it before
 * g_test_init(), so that --help (which g_test_init() answers and exits on)
 * lists airlock's options after GLib's; after g_test_init() it works as
 * well, without them in --help.  Also
 * makes the test program a child subreaper (airlock_vm_adopt_qemu()), so
 * each run reaps its own QEMU at once. */
AIRLOCK_PUBLIC void airlock_test_init (int *argc, char ***argv);

/* Registers @func as "/ARCH" @path ("/amd64/server/no-egress") for every
 * selected arch, with a fixture (AirlockTestFixture) set up before it and
 * freed after it.  @path starts with '/'.  Under --airlock-out=DIR each
 * case's bundle goes to DIR/ARCH/PATH (DIR/run-N/ARCH/PATH when DIR held
 * an earlier run: airlock_test_get_out_dir()). */
AIRLOCK_PUBLIC void airlock_test_add (const char *path, gconstpointer user_data,
                                      AirlockTestFunc func);

/* Where this run's bundles go: --airlock-out=DIR itself when DIR is
 * missing or empty, else a fresh DIR/run-N (the first N free; created
 * here) — a bundle is never overwritten, so a second run with the same DIR
 * gets its own.  NULL without --airlock-out, or when that directory
 * cannot be made (each case then fails naming it). */
AIRLOCK_PUBLIC const char *airlock_test_get_out_dir (void);

/* The image reference given (--airlock-image / AIRLOCK_TEST_IMAGE), or NULL. */
AIRLOCK_PUBLIC const char *airlock_test_get_image (void);

/* Runs f->kase on the arch's session.  The case failing to run (image
 * error, VM error) fails the test with the error's message; otherwise the
 * result is kept in f->result and returned (transfer none). */
AIRLOCK_PUBLIC AirlockResult *airlock_test_run (AirlockTestFixture *f);
/* Starts f->kase for a conversation over stdio (airlock_run_write_stdin,
 * airlock_run_read_line); failing to start fails the test.  Transfer none. */
AIRLOCK_PUBLIC AirlockRun *airlock_test_start (AirlockTestFixture *f);
/* Waits for the run of airlock_test_start(); as airlock_test_run(). */
AIRLOCK_PUBLIC AirlockResult *airlock_test_wait (AirlockTestFixture *f);
/* Writes @line and a '\n' to the run's stdin, then reads one line of its
 * stdout (waiting up to @timeout_ms); a write or read failure fails the
 * test.  Transfer full. */
AIRLOCK_PUBLIC char *airlock_test_exchange (AirlockTestFixture *f, const char *line,
                                            guint timeout_ms);

/* ---- checks: FALSE with @error set to the readable report ----
 *
 * The report names the case and arch, lists the offending attempts
 * (process, system call, family, protocol, address, port, DNS names) and
 * ends with the bundle's path.  Each assertion below is its check plus
 * g_assertion_message() on failure. */

/* The workload made no egress attempt, the capture holds no flow that no
 * record explains, and the evidence is whole. */
AIRLOCK_PUBLIC gboolean airlock_check_no_egress (AirlockResult *result, GError **error);
/* Every egress attempt of the workload is admitted by the case's own
 * policy (airlock_case_allow(), airlock_case_load_policy(): what the case
 * may reach is said once, where the case is made), as the verdict judged
 * it — by the name its address was handed out for and by every TLS SNI
 * and HTTP Host it sent —, no flow is unattributed, and the evidence is
 * whole.  The report lists each attempt the policy does not admit, with
 * the verdict's reason. */
AIRLOCK_PUBLIC gboolean airlock_check_egress_admitted (AirlockResult *result, GError **error);
/* Every egress attempt of the workload is admitted by @rules (policy
 * text, docs/policy.md; a rule that does not parse is reported as the
 * failure), no flow is unattributed, and the evidence is whole.  A `host=`
 * rule matches the name the sinkhole handed the attempt's address out for
 * (AirlockAttempt.host); the SNI and Host a connection sent are judged by
 * the verdict (give the case the policy and check the verdict). */
AIRLOCK_PUBLIC gboolean airlock_check_egress_only_to (AirlockResult *result, const char *rules,
                                                      GError **error);
/* Every negative control was seen by the supervisor and in the capture. */
AIRLOCK_PUBLIC gboolean airlock_check_controls_observed (AirlockResult *result, GError **error);
AIRLOCK_PUBLIC gboolean airlock_check_verdict (AirlockResult *result, AirlockVerdictKind expected,
                                               GError **error);
AIRLOCK_PUBLIC gboolean airlock_check_exit_code (AirlockResult *result, int expected,
                                                 GError **error);
AIRLOCK_PUBLIC gboolean airlock_check_stdout_contains (AirlockResult *result, const char *needle,
                                                       GError **error);

/* Fails the running test with @error's message (at @file:@line in @func),
 * unless @ok.  What the assertion macros call. */
AIRLOCK_PUBLIC void airlock_test_assert_check (const char *file, int line, const char *func,
                                               const char *expr, gboolean ok, GError *error);

#define AIRLOCK__ASSERT_CHECK(expr, call)                                                    \
  G_STMT_START                                                                               \
  {                                                                                          \
    GError *airlock__error = NULL;                                                           \
    gboolean airlock__ok = (call);                                                           \
    airlock_test_assert_check (__FILE__, __LINE__, G_STRFUNC, expr, airlock__ok,             \
                               airlock__error);                                              \
  }                                                                                          \
  G_STMT_END

#define airlock_assert_no_egress(result) \
  AIRLOCK__ASSERT_CHECK ("airlock_assert_no_egress (" #result ")", \
                         airlock_check_no_egress ((result), &airlock__error))
#define airlock_assert_egress_admitted(result) \
  AIRLOCK__ASSERT_CHECK ("airlock_assert_egress_admitted (" #result ")", \
                         airlock_check_egress_admitted ((result), &airlock__error))
#define airlock_assert_egress_only_to(result, rules) \
  AIRLOCK__ASSERT_CHECK ("airlock_assert_egress_only_to (" #result ", " #rules ")", \
                         airlock_check_egress_only_to ((result), (rules), &airlock__error))
#define airlock_assert_controls_observed(result) \
  AIRLOCK__ASSERT_CHECK ("airlock_assert_controls_observed (" #result ")", \
                         airlock_check_controls_observed ((result), &airlock__error))
#define airlock_assert_verdict(result, expected) \
  AIRLOCK__ASSERT_CHECK ("airlock_assert_verdict (" #result ", " #expected ")", \
                         airlock_check_verdict ((result), (expected), &airlock__error))
#define airlock_assert_exit_code(result, expected) \
  AIRLOCK__ASSERT_CHECK ("airlock_assert_exit_code (" #result ", " #expected ")", \
                         airlock_check_exit_code ((result), (expected), &airlock__error))
#define airlock_assert_stdout_contains(result, needle) \
  AIRLOCK__ASSERT_CHECK ("airlock_assert_stdout_contains (" #result ", " #needle ")", \
                         airlock_check_stdout_contains ((result), (needle), &airlock__error))

G_END_DECLS
