/* GLib test integration (testing.h): per-arch registration, one shared
 * session per arch, and checks whose failure is a report a person can act
 * on. */
#include "config.h"

#include "testing/testing.h"

#include "policy/policy.h"

#include <glib/gstdio.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

static struct {
  gboolean initialised;
  gboolean arches[AIRLOCK_N_ARCHES];
  char *image;
  char *out_dir;
  /* Where this run's bundles go (out_dir, or a fresh out_dir/run-N), or
   * why there is none: made at the first case (resolve_run_dir()). */
  char *run_dir;
  char *run_dir_error;
  char *uri;
  AirlockAccel accel;
  AirlockClock clock;
  AirlockSession *sessions[AIRLOCK_N_ARCHES];
  char *session_errors[AIRLOCK_N_ARCHES];   /* why the arch's session could not be made */
  gboolean session_broken[AIRLOCK_N_ARCHES]; /* …for a reason other than "cannot run here" */
} T;

typedef struct {
  char *path;               /* as registered, without the arch */
  AirlockArch arch;
  gconstpointer user_data;
  AirlockTestFunc func;
} Registration;

static gboolean
parse_arches (const char *spec, gboolean *arches)
{
  g_auto (GStrv) words = g_strsplit (spec, ",", -1);

  memset (arches, 0, sizeof (gboolean) * AIRLOCK_N_ARCHES);
  for (guint i = 0; words[i]; i++)
    {
      AirlockArch a;

      if (g_str_equal (words[i], "all"))
        for (unsigned k = 0; k < AIRLOCK_N_ARCHES; k++)
          arches[k] = TRUE;
      else if (airlock_arch_from_string (words[i], &a))
        arches[a] = TRUE;
      else
        return FALSE;
    }
  return TRUE;
}

static const char *
env_or (const char *name, const char *fallback)
{
  const char *v = g_getenv (name);

  return v && *v ? v : fallback;
}

/* What --help adds to GLib's usage: g_test_init() prints its own and
 * exits, so this runs from exit() (registered by airlock_test_init() when
 * it sees --help before g_test_init() does), after GLib's text in the same
 * stdout buffer. */
static void
print_airlock_help (void)
{
  printf ("Airlock Options (or their environment variables):\n"
          "  --airlock-image=REF            the image each case starts from: oci:DIR[:TAG],\n"
          "                                 oci-archive:FILE[:TAG], docker-archive:FILE (AIRLOCK_TEST_IMAGE)\n"
          "  --airlock-arch=LIST            amd64, arm64, all or a comma list (AIRLOCK_TEST_ARCH; default all)\n"
          "  --airlock-out=DIR              keep each case's evidence bundle in DIR/ARCH/PATH; a DIR that\n"
          "                                 holds an earlier run gets a fresh DIR/run-N (AIRLOCK_TEST_OUT)\n"
          "  --airlock-connect=URI          libvirt URI (AIRLOCK_CONNECT; default the embedded driver)\n"
          "  --airlock-accel=auto|tcg|kvm   the accelerator (AIRLOCK_TEST_ACCEL; default auto)\n"
          "  --airlock-clock=warp|real      the guest's clock (AIRLOCK_TEST_CLOCK; default warp)\n"
          "\n");
}

static gboolean
is_help (const char *arg)
{
  return g_str_equal (arg, "--help") || g_str_equal (arg, "-h") || g_str_equal (arg, "-?");
}

void
airlock_test_init (int *argc, char ***argv)
{
  const char *arch_spec = env_or ("AIRLOCK_TEST_ARCH", "all");
  const char *accel = env_or ("AIRLOCK_TEST_ACCEL", "auto");
  const char *clock = env_or ("AIRLOCK_TEST_CLOCK", "warp");
  const char *prog = g_get_prgname () ? g_get_prgname () : (*argv)[0];
  int out = 1;

  g_free (T.image);
  g_free (T.out_dir);
  g_free (T.uri);
  g_clear_pointer (&T.run_dir, g_free);
  g_clear_pointer (&T.run_dir_error, g_free);
  (void) airlock_vm_adopt_qemu (NULL);
  T.image = g_strdup (g_getenv ("AIRLOCK_TEST_IMAGE"));
  T.out_dir = g_strdup (g_getenv ("AIRLOCK_TEST_OUT"));
  T.uri = g_strdup (g_getenv ("AIRLOCK_CONNECT"));
  for (int i = 1; i < *argc; i++)
    {
      const char *a = (*argv)[i];

      /* Left in argv for g_test_init(), which prints its usage and exits;
       * after it, it is too late (it has exited already). */
      if (is_help (a) && !g_test_initialized ())
        {
          static gboolean registered;

          if (!registered)
            atexit (print_airlock_help);
          registered = TRUE;
        }

#define TAKE(opt, var)                                                    \
      if (g_str_has_prefix (a, opt "="))                                  \
        {                                                                 \
          var = a + strlen (opt "=");                                     \
          continue;                                                       \
        }
      {
        const char *image = NULL, *dir = NULL, *uri = NULL;

        TAKE ("--airlock-arch", arch_spec);
        TAKE ("--airlock-accel", accel);
        TAKE ("--airlock-clock", clock);
        if (g_str_has_prefix (a, "--airlock-image="))
          image = a + strlen ("--airlock-image=");
        else if (g_str_has_prefix (a, "--airlock-out="))
          dir = a + strlen ("--airlock-out=");
        else if (g_str_has_prefix (a, "--airlock-connect="))
          uri = a + strlen ("--airlock-connect=");
        else if (g_str_has_prefix (a, "--airlock-"))
          {
            fprintf (stderr, "%s: unknown option '%s' (airlock takes --airlock-arch=, "
                     "--airlock-image=, --airlock-out=, --airlock-connect=, --airlock-accel=, --airlock-clock=)\n",
                     prog, a);
            exit (2);
          }
        else
          {
            (*argv)[out++] = (*argv)[i];
            continue;
          }
        if (image)
          {
            g_free (T.image);
            T.image = g_strdup (image);
          }
        if (dir)
          {
            g_free (T.out_dir);
            T.out_dir = g_strdup (dir);
          }
        if (uri)
          {
            g_free (T.uri);
            T.uri = g_strdup (uri);
          }
      }
#undef TAKE
    }
  *argc = out;
  (*argv)[out] = NULL;
  if (!parse_arches (arch_spec, T.arches))
    {
      fprintf (stderr, "%s: unknown arch list '%s' (expected amd64, arm64, all or a comma list)\n",
               prog, arch_spec);
      exit (2);
    }
  if (!airlock_accel_from_string (accel, &T.accel))
    {
      fprintf (stderr, "%s: unknown accelerator '%s' (expected auto, tcg or kvm)\n",
               prog, accel);
      exit (2);
    }
  if (!airlock_clock_from_string (clock, &T.clock))
    {
      fprintf (stderr, "%s: unknown clock '%s' (expected warp or real)\n",
               prog, clock);
      exit (2);
    }
  T.initialised = TRUE;
}

const char *
airlock_test_get_image (void)
{
  return T.image;
}

/* The arch's session, made at its first case.  An arch that cannot run
 * here keeps its reason and every case of it skips with that; any other
 * failure (a broken install, an unreadable cache) fails every case with
 * it: a suite must never go green on nothing. */
static AirlockSession *
session_for (AirlockArch arch, const char **ret_why)
{
  if (!T.sessions[arch] && !T.session_errors[arch])
    {
      g_autoptr (GError) error = NULL;
      AirlockSessionOptions o = { .uri = T.uri, .accel = T.accel, .clock = T.clock };

      T.sessions[arch] = airlock_session_new (arch, &o, &error);
      if (!T.sessions[arch] && airlock_session_error_cannot_run_here (error))
        T.session_errors[arch] = g_strdup_printf ("%s cannot run here: %s",
                                                  airlock_arch_to_string (arch), error->message);
      else if (!T.sessions[arch])
        {
          T.session_broken[arch] = TRUE;
          T.session_errors[arch] = g_strdup_printf ("%s: cannot prepare a session: %s",
                                                    airlock_arch_to_string (arch), error->message);
        }
    }
  *ret_why = T.session_errors[arch];
  return T.sessions[arch];
}

/* --airlock-out=DIR for this run: DIR itself when it is missing or
 * empty; else DIR/run-N, the first N whose directory this call creates
 * (mkdir, so two programs started at once never share one).  A bundle is
 * never overwritten, so rerunning a suite with the same DIR would
 * otherwise fail every case on its first bundle.  FALSE with T.run_dir_error. */
static gboolean
resolve_run_dir (void)
{
  g_autoptr (GDir) dir = NULL;
  g_autoptr (GError) error = NULL;

  if (T.run_dir || T.run_dir_error)
    return T.run_dir != NULL;
  if (g_mkdir_with_parents (T.out_dir, 0755) != 0)
    {
      int saved = errno;

      T.run_dir_error = g_strdup_printf ("cannot create --airlock-out directory '%s': %s",
                                         T.out_dir, g_strerror (saved));
      return FALSE;
    }
  dir = g_dir_open (T.out_dir, 0, &error);
  if (!dir)
    {
      T.run_dir_error = g_strdup_printf ("cannot read --airlock-out directory '%s': %s",
                                         T.out_dir, error->message);
      return FALSE;
    }
  if (!g_dir_read_name (dir))
    {
      T.run_dir = g_strdup (T.out_dir);
      return TRUE;
    }
  for (guint n = 1; n < 100000; n++)
    {
      g_autofree char *name = g_strdup_printf ("run-%u", n);
      g_autofree char *path = g_build_filename (T.out_dir, name, NULL);

      if (g_mkdir (path, 0755) == 0)
        {
          g_test_message ("airlock: '%s' holds an earlier run; this run's bundles go to '%s'",
                          T.out_dir, path);
          T.run_dir = g_steal_pointer (&path);
          return TRUE;
        }
      if (errno != EEXIST)
        {
          int saved = errno;

          T.run_dir_error = g_strdup_printf ("cannot create '%s' for this run's bundles "
                                             "(--airlock-out): %s", path, g_strerror (saved));
          return FALSE;
        }
    }
  T.run_dir_error = g_strdup_printf ("--airlock-out directory '%s' holds run-1 … run-99999 "
                                     "already: give another", T.out_dir);
  return FALSE;
}

/* The directory this run's bundles go under, or NULL without --airlock-out
 * or when it cannot be made (see resolve_run_dir()).  For tests of the
 * integration itself. */
const char *
airlock_test_get_out_dir (void)
{
  if (!T.out_dir || !resolve_run_dir ())
    return NULL;
  return T.run_dir;
}

static void
fixture_setup (AirlockTestFixture *f, gconstpointer data)
{
  const Registration *reg = data;
  const char *why = NULL;

  memset (f, 0, sizeof *f);
  f->arch = reg->arch;
  f->session = session_for (reg->arch, &why);
  if (!f->session)
    return;
  f->kase = airlock_case_new (T.image);
  airlock_case_set_name (f->kase, reg->path);
  if (T.out_dir && resolve_run_dir ())
    {
      /* DIR/ARCH/PATH: the test path's components as directories. */
      g_autofree char *dir = g_build_filename (T.run_dir, airlock_arch_to_string (reg->arch),
                                               reg->path, NULL);

      airlock_case_set_bundle_dir (f->kase, dir);
    }
}

static void
fixture_teardown (AirlockTestFixture *f, gconstpointer data)
{
  g_clear_pointer (&f->run, airlock_run_free);
  g_clear_pointer (&f->result, airlock_result_free);
  g_clear_pointer (&f->kase, airlock_case_free);
}

static void
run_registered (AirlockTestFixture *f, gconstpointer data)
{
  const Registration *reg = data;
  const char *why = NULL;

  if (!f->session)
    {
      (void) session_for (reg->arch, &why);
      if (T.session_broken[reg->arch])
        {
          g_test_fail_printf ("%s", why);
          return;
        }
      g_test_skip (why);
      return;
    }
  if (T.out_dir && !resolve_run_dir ())
    {
      g_test_fail_printf ("%s", T.run_dir_error);
      return;
    }
  if (!T.image)
    {
      /* Nothing to run is a mistake of the suite's caller, not a reason
       * to report the case as neither passed nor failed. */
      g_test_fail_printf ("no image to run: give --airlock-image=REF or AIRLOCK_TEST_IMAGE");
      return;
    }
  reg->func (f, reg->user_data);
}

void
airlock_test_add (const char *path, gconstpointer user_data, AirlockTestFunc func)
{
  g_return_if_fail (path && path[0] == '/');
  g_return_if_fail (T.initialised);

  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    {
      Registration *reg;
      g_autofree char *full = NULL;

      if (!T.arches[a])
        continue;
      /* Lives as long as the test program (GLib keeps the pointer). */
      reg = g_new0 (Registration, 1);
      reg->path = g_strdup (path);
      reg->arch = (AirlockArch) a;
      reg->user_data = user_data;
      reg->func = func;
      full = g_strconcat ("/", airlock_arch_to_string ((AirlockArch) a), path, NULL);
      g_test_add_vtable (full, sizeof (AirlockTestFixture), reg,
                         (GTestFixtureFunc) fixture_setup, (GTestFixtureFunc) run_registered,
                         (GTestFixtureFunc) fixture_teardown);
    }
}

static void
fail_now (const char *fmt, ...) G_GNUC_PRINTF (1, 2);

static void
fail_now (const char *fmt, ...)
{
  va_list ap;
  g_autofree char *msg = NULL;

  va_start (ap, fmt);
  msg = g_strdup_vprintf (fmt, ap);
  va_end (ap);
  g_assertion_message (G_LOG_DOMAIN, __FILE__, __LINE__, G_STRFUNC, msg);
}

AirlockResult *
airlock_test_run (AirlockTestFixture *f)
{
  g_autoptr (GError) error = NULL;

  g_clear_pointer (&f->result, airlock_result_free);
  f->result = airlock_session_run (f->session, f->kase, &error);
  if (!f->result)
    fail_now ("%s: the case could not run: %s", airlock_arch_to_string (f->arch), error->message);
  return f->result;
}

AirlockRun *
airlock_test_start (AirlockTestFixture *f)
{
  g_autoptr (GError) error = NULL;

  g_clear_pointer (&f->run, airlock_run_free);
  f->run = airlock_session_start (f->session, f->kase, &error);
  if (!f->run)
    fail_now ("%s: the case could not start: %s", airlock_arch_to_string (f->arch), error->message);
  return f->run;
}

AirlockResult *
airlock_test_wait (AirlockTestFixture *f)
{
  g_autoptr (GError) error = NULL;

  if (!f->run)
    fail_now ("airlock_test_wait: no case was started (airlock_test_start)");
  g_clear_pointer (&f->result, airlock_result_free);
  f->result = airlock_run_wait (f->run, &error);
  g_clear_pointer (&f->run, airlock_run_free);
  if (!f->result)
    fail_now ("%s: the case did not run: %s", airlock_arch_to_string (f->arch), error->message);
  return f->result;
}

char *
airlock_test_exchange (AirlockTestFixture *f, const char *line, guint timeout_ms)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *with_nl = g_strconcat (line, "\n", NULL);
  char *answer;

  if (!f->run)
    fail_now ("airlock_test_exchange: no case was started (airlock_test_start)");
  if (!airlock_run_write_stdin (f->run, with_nl, strlen (with_nl), &error))
    fail_now ("%s: cannot send '%s' to the workload: %s", airlock_arch_to_string (f->arch), line,
              error->message);
  answer = airlock_run_read_line (f->run, timeout_ms, &error);
  if (!answer)
    fail_now ("%s: no answer to '%s': %s", airlock_arch_to_string (f->arch), line, error->message);
  return answer;
}

/* ---- checks ---- */

/* The report's head: which case, which arch, what was expected. */
static GString *
report_new (AirlockResult *r, const char *what)
{
  GString *out = g_string_new (NULL);
  const char *name = airlock_result_get_case_name (r);

  g_string_append_printf (out, "%s%s%s: %s", airlock_arch_to_string (airlock_result_get_arch (r)),
                          name ? " " : "", name ? name : "", what);
  return out;
}

static void
report_attempt (GString *out, const AirlockAttempt *a)
{
  g_string_append_printf (out, "\n  %s %s %s %s",
                          a->exe ? a->exe : "?", a->syscall ? a->syscall : "?",
                          a->family ? a->family : "-", a->protocol ? a->protocol : "-");
  if (a->address)
    g_string_append_printf (out, " %s", a->address);
  if (a->port)
    g_string_append_printf (out, " port %u", a->port);
  for (guint i = 0; a->dns_names && a->dns_names[i]; i++)
    g_string_append_printf (out, " dns=%s", a->dns_names[i]);
  g_string_append_printf (out, " (pid %u, %s)", a->pid, a->outcome ? a->outcome : "");
}

static gboolean
report_fail (AirlockResult *r, GString *out, GError **error)
{
  const char *dir = airlock_result_get_bundle_dir (r);

  g_string_append_printf (out, "\n  evidence: %s", dir ? dir : "no bundle (give --airlock-out=DIR to keep one)");
  g_set_error_literal (error, AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_INVALID, out->str);
  g_string_free (out, TRUE);
  return FALSE;
}

/* Common to the egress checks: whole evidence, no unattributed flow.
 * Appends to @out and returns FALSE when either fails. */
static gboolean
evidence_whole (AirlockResult *r, GString *out)
{
  GPtrArray *flows = airlock_result_get_flows (r);
  gboolean ok = TRUE;

  if (!airlock_result_is_complete (r))
    {
      g_string_append_printf (out, "\n  the evidence is incomplete, so nothing is proven: %s",
                              airlock_result_get_incomplete_reason (r));
      ok = FALSE;
    }
  for (guint i = 0; i < flows->len; i++)
    {
      const AirlockResultFlow *f = flows->pdata[i];

      if (f->attributed)
        continue;
      g_string_append_printf (out, "\n  unattributed flow %s: %" G_GUINT64_FORMAT
                              " packet(s) left the guest that no supervisor record explains",
                              f->key, f->packets);
      ok = FALSE;
    }
  return ok;
}

gboolean
airlock_check_no_egress (AirlockResult *r, GError **error)
{
  GPtrArray *attempts = airlock_result_get_attempts (r);
  g_autoptr (GString) out = report_new (r, "expected no egress");
  guint n = 0;
  gboolean whole = evidence_whole (r, out);

  for (guint i = 0; i < attempts->len; i++)
    {
      const AirlockAttempt *a = attempts->pdata[i];

      if (!a->egress)
        continue;
      if (n++ == 0)
        g_string_append (out, "\n  egress attempts:");
      report_attempt (out, a);
    }
  if (whole && n == 0)
    return TRUE;
  return report_fail (r, g_steal_pointer (&out), error);
}

gboolean
airlock_check_egress_admitted (AirlockResult *r, GError **error)
{
  GPtrArray *attempts = airlock_result_get_attempts (r);
  g_autoptr (GString) out = report_new (r, "expected egress only as the case's policy admits "
                                           "(airlock_case_allow, airlock_case_load_policy)");
  const char *const *reasons = airlock_result_get_reasons (r);
  guint n = 0;
  gboolean whole = evidence_whole (r, out);

  for (guint i = 0; i < attempts->len; i++)
    {
      const AirlockAttempt *a = attempts->pdata[i];

      /* ->admitted is the verdict's judgment under the case's policy: by
       * the address's name and by every SNI and Host its connections
       * sent, which rules given here again could not see. */
      if (!a->egress || a->admitted)
        continue;
      if (n++ == 0)
        g_string_append (out, "\n  egress attempts the case's policy does not admit:");
      report_attempt (out, a);
    }
  if (whole && n == 0)
    return TRUE;
  for (guint i = 0; n && reasons && reasons[i]; i++)
    if (g_str_has_prefix (reasons[i], "egress not admitted"))
      g_string_append_printf (out, "\n  %s", reasons[i]);
  return report_fail (r, g_steal_pointer (&out), error);
}

gboolean
airlock_check_egress_only_to (AirlockResult *r, const char *rules, GError **error)
{
  GPtrArray *attempts = airlock_result_get_attempts (r);
  g_autoptr (GError) parse_error = NULL;
  g_autoptr (AirlockPolicy) policy = NULL;
  g_autofree char *what = NULL;
  g_autoptr (GString) out = NULL;
  guint n = 0;
  gboolean whole;

  /* No rules of its own: the case's, said once where the case is made. */
  if (!rules)
    return airlock_check_egress_admitted (r, error);
  policy = airlock_policy_parse (rules, strlen (rules), "allowed", &parse_error);
  what = g_strdup_printf ("expected egress only to: %s", rules);
  out = report_new (r, what);
  if (!policy)
    {
      g_string_append_printf (out, "\n  the rules do not parse: %s", parse_error->message);
      return report_fail (r, g_steal_pointer (&out), error);
    }
  whole = evidence_whole (r, out);
  for (guint i = 0; i < attempts->len; i++)
    {
      const AirlockAttempt *a = attempts->pdata[i];
      guint8 addr[16] = { 0 };
      int family, protocol;

      if (!a->egress || !a->address)
        continue;
      family = strchr (a->address, ':') ? AF_INET6 : AF_INET;
      protocol = g_strcmp0 (a->protocol, "tcp") == 0    ? 6
                 : g_strcmp0 (a->protocol, "udp") == 0  ? 17
                 : g_strcmp0 (a->protocol, "icmp") == 0 ? 1
                 : g_strcmp0 (a->protocol, "icmpv6") == 0 ? 58
                                                          : 255;
      if (inet_pton (family, a->address, addr) == 1)
        {
          /* With the name the sinkhole handed the address out for, so
           * `host=` rules admit what they name. */
          AirlockPolicyAttempt pa = {
            .family = family, .protocol = protocol, .address = addr, .port = a->port,
            .dns_names = a->dns_names, .exe = a->exe, .host = a->host,
          };

          if (airlock_policy_admits_attempt (policy, &pa, NULL))
            continue;
        }
      if (n++ == 0)
        g_string_append (out, "\n  egress attempts the rules do not admit:");
      report_attempt (out, a);
    }
  if (whole && n == 0)
    return TRUE;
  return report_fail (r, g_steal_pointer (&out), error);
}

gboolean
airlock_check_controls_observed (AirlockResult *r, GError **error)
{
  GPtrArray *controls = airlock_result_get_controls (r);
  g_autoptr (GString) out = report_new (r, "expected every negative control observed");
  guint missing = 0;

  if (controls->len == 0)
    {
      g_string_append (out, "\n  the negative controls did not run (airlock_case_set_controls)");
      return report_fail (r, g_steal_pointer (&out), error);
    }
  for (guint i = 0; i < controls->len; i++)
    {
      const AirlockResultControl *c = controls->pdata[i];

      if (c->by_supervisor && c->in_capture)
        continue;
      missing++;
      g_string_append_printf (out, "\n  %s (%s): %s", c->name, c->key,
                              !c->by_supervisor && !c->in_capture ? "seen by neither the supervisor nor the capture"
                              : !c->by_supervisor ? "not seen by the supervisor"
                                                  : "not in the capture");
    }
  if (missing == 0)
    return TRUE;
  return report_fail (r, g_steal_pointer (&out), error);
}

gboolean
airlock_check_verdict (AirlockResult *r, AirlockVerdictKind expected, GError **error)
{
  g_autofree char *what = NULL;
  g_autoptr (GString) out = NULL;
  const char *const *reasons = airlock_result_get_reasons (r);

  if (airlock_result_get_verdict (r) == expected)
    return TRUE;
  what = g_strdup_printf ("expected verdict %s, got %s", airlock_verdict_kind_to_string (expected),
                          airlock_verdict_kind_to_string (airlock_result_get_verdict (r)));
  out = report_new (r, what);
  for (guint i = 0; reasons && reasons[i]; i++)
    g_string_append_printf (out, "\n  %s", reasons[i]);
  return report_fail (r, g_steal_pointer (&out), error);
}

gboolean
airlock_check_exit_code (AirlockResult *r, int expected, GError **error)
{
  int status;
  g_autofree char *what = NULL;
  g_autoptr (GString) out = NULL;

  if (airlock_result_get_exit_code (r) == expected)
    return TRUE;
  if (!airlock_result_get_wait_status (r, &status))
    what = g_strdup_printf ("expected exit code %d, but the workload's exit was not reported",
                            expected);
  else if (airlock_result_get_exit_code (r) >= 0)
    what = g_strdup_printf ("expected exit code %d, got %d", expected,
                            airlock_result_get_exit_code (r));
  else
    what = g_strdup_printf ("expected exit code %d, but it ended by signal (wait status 0x%x)",
                            expected, (unsigned) status);
  out = report_new (r, what);
  return report_fail (r, g_steal_pointer (&out), error);
}

gboolean
airlock_check_stdout_contains (AirlockResult *r, const char *needle, GError **error)
{
  GBytes *so = airlock_result_get_stdout (r);
  gsize len;
  const char *data = so ? g_bytes_get_data (so, &len) : NULL;
  g_autofree char *what = NULL;
  g_autofree char *tail = NULL;
  g_autoptr (GString) out = NULL;

  if (!so)
    len = 0;
  if (data && g_strstr_len (data, (gssize) len, needle))
    return TRUE;
  what = g_strdup_printf ("expected stdout to contain '%s'", needle);
  out = report_new (r, what);
  tail = g_utf8_make_valid (data ? data + (len > 400 ? len - 400 : 0) : "", (gssize) MIN (len, 400));
  g_string_append_printf (out, "\n  stdout (%" G_GSIZE_FORMAT " bytes)%s: %s", len,
                          len > 400 ? ", last 400" : "", tail);
  return report_fail (r, g_steal_pointer (&out), error);
}

void
airlock_test_assert_check (const char *file, int line, const char *func, const char *expr,
                           gboolean ok, GError *error)
{
  g_autofree char *msg = NULL;

  if (ok)
    {
      g_clear_error (&error);
      return;
    }
  msg = g_strdup_printf ("%s failed:\n%s", expr, error ? error->message : "(no report)");
  g_clear_error (&error);
  g_assertion_message (G_LOG_DOMAIN, file, line, func, msg);
}
