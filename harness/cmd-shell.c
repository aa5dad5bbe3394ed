/* airlock shell: an interactive shell inside an image's root, booted as a
 * run would be (session, case, supervisor, evidence), on a terminal of its
 * own in the guest.  Every network call the shell's commands make is
 * printed as the supervisor records it, on stderr, apart from the shell's
 * output; the evidence bundle is written as for any run.
 *
 * The terminal here is put in raw mode, so every key (^C, ^D, ^Z, arrows)
 * reaches the guest's line discipline and the shell there; it is restored
 * on every way out (the end, an error, SIGINT/SIGTERM/SIGHUP/SIGQUIT,
 * exit()). */
#define _GNU_SOURCE

#include "config.h"

#include "harness.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gunixinputstream.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#define DEFAULT_TIMEOUT_S 3600
#define MAX_TIMEOUT_S 86400
#define MAX_GUEST_TIME_S (7 * 86400)
#define STATIC_SHELL "/.airlock/bin/sh"

/* ---- our terminal ---- */

/* Written before the handlers are installed, read by them: the state to
 * go back to, and whether we left it. */
static struct termios saved_termios;
static struct termios boot_termios;   /* raw, but ^C still ours: the boot can be given up */
static struct termios raw_termios;    /* raw: every key the guest's */
static volatile sig_atomic_t raw_active;
static volatile sig_atomic_t shell_started;
static GMutex mode_lock;              /* terminal_enter_raw() against shell_runs() */
/* The signal handlers' self-pipe: 'w' a window change, a signal number a
 * signal that ends the session, 'q' (from us) the end. */
static int signal_pipe[2] = { -1, -1 };

static void
terminal_restore (void)
{
  if (raw_active)
    {
      /* Input not read yet goes, not to whatever reads this terminal next:
       * the shell's output steers the terminal, and a terminal answers
       * some sequences (a title report, a status query) on its input.
       * TCSANOW: from a signal handler too, where waiting for output to
       * drain could hang on a stopped terminal. */
      (void) tcflush (STDIN_FILENO, TCIFLUSH);
      (void) tcsetattr (STDIN_FILENO, TCSANOW, &saved_termios);
      raw_active = 0;
    }
}

/* SIGINT, SIGTERM, SIGHUP, SIGQUIT (from elsewhere, or ^C while the guest
 * boots: once the shell runs, raw mode sends those keys to the guest): the
 * terminal back as it was at once, then the run is ended (the signal
 * thread cancels the VM, so QEMU does not outlive us and the bundle is
 * finished, inconclusive) and cmd_shell() raises the signal again at its
 * end.  A second one takes its default action (SA_RESETHAND). */
static void
on_fatal_signal (int sig)
{
  int saved = errno;
  char c = (char) sig;

  terminal_restore ();
  if (signal_pipe[1] < 0 || write (signal_pipe[1], &c, 1) != 1)
    raise (sig);
  errno = saved;
}

/* Back from a stop (SIGSTOP, a debugger): whoever had the terminal may have
 * reset it. */
static void
on_cont (int sig)
{
  if (raw_active)
    (void) tcsetattr (STDIN_FILENO, TCSANOW, shell_started ? &raw_termios : &boot_termios);
}

static void
on_winch (int sig)
{
  int saved = errno;
  char w = 'w';

  if (signal_pipe[1] >= 0)
    (void) !write (signal_pipe[1], &w, 1);
  errno = saved;
}

static void
install_handlers (void)
{
  static const int fatal[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
  struct sigaction sa = { 0 };

  sigemptyset (&sa.sa_mask);
  sa.sa_handler = on_fatal_signal;
  sa.sa_flags = SA_RESETHAND;
  for (guint i = 0; i < G_N_ELEMENTS (fatal); i++)
    sigaction (fatal[i], &sa, NULL);
  sa.sa_handler = on_cont;
  sa.sa_flags = SA_RESTART;
  sigaction (SIGCONT, &sa, NULL);
  sa.sa_handler = on_winch;
  sigaction (SIGWINCH, &sa, NULL);
}

/* Raw mode, in two steps: while the guest boots (and the negative controls
 * run) ^C is still ours, so a boot can be given up; once the shell runs
 * (shell_runs()) every key is the guest's. */
static gboolean
terminal_enter_raw (void)
{
  gboolean ok = TRUE;

  if (tcgetattr (STDIN_FILENO, &saved_termios) < 0)
    return FALSE;
  raw_termios = saved_termios;
  cfmakeraw (&raw_termios);
  boot_termios = raw_termios;
  boot_termios.c_lflag |= ISIG;
  atexit (terminal_restore);
  g_mutex_lock (&mode_lock);
  raw_active = 1;
  if (tcsetattr (STDIN_FILENO, TCSANOW, shell_started ? &raw_termios : &boot_termios) < 0)
    {
      raw_active = 0;
      ok = FALSE;
    }
  g_mutex_unlock (&mode_lock);
  return ok;
}

static void
shell_runs (void)
{
  g_mutex_lock (&mode_lock);
  shell_started = 1;
  if (raw_active)
    (void) tcsetattr (STDIN_FILENO, TCSANOW, &raw_termios);
  g_mutex_unlock (&mode_lock);
}

static void
window_size (guint16 *ret_rows, guint16 *ret_cols)
{
  struct winsize ws = { 0 };

  if ((ioctl (STDIN_FILENO, TIOCGWINSZ, &ws) < 0 || ws.ws_row == 0)
      && (ioctl (STDOUT_FILENO, TIOCGWINSZ, &ws) < 0 || ws.ws_row == 0))
    {
      ws.ws_row = 24;
      ws.ws_col = 80;
    }
  *ret_rows = ws.ws_row;
  *ret_cols = ws.ws_col;
}

/* ---- what goes on it ---- */

typedef struct {
  GMutex lock;              /* one writer at a time: the shell's output, our lines */
  gboolean last_was_newline;
  gboolean color;           /* stderr is a terminal */
  /* Our lines, written by a thread of their own: the evidence thread that
   * makes them must never wait for a terminal (its receipt times are what
   * the heartbeat checks measure). */
  GAsyncQueue *lines;
  GThread *printer;
  guint n_controls;         /* records of the negative controls (not printed one by one) */
  gboolean shell_named;     /* the shell's execve was seen */
} Terminal;

static void
write_all (int fd, const char *data, gsize len)
{
  while (len > 0)
    {
      ssize_t n = write (fd, data, len);

      if (n < 0 && (errno == EINTR || errno == EAGAIN))
        {
          if (errno == EAGAIN)
            g_usleep (1000);
          continue;
        }
      if (n <= 0)
        return;   /* our terminal is gone: nothing left to show it on */
      data += n;
      len -= (gsize) n;
    }
}

/* The shell's output.  On a terminal: what the guest's terminal produced
 * (its line discipline already turned "\n" into "\r\n"), meant for a
 * terminal, passed as `docker run -it` passes it.  Without one: its
 * stdout and stderr, each to ours.  From the stdio reader thread. */
static void
shell_output (int stream, const guint8 *data, gsize len, gpointer user_data)
{
  Terminal *t = user_data;

  if (len == 0)
    return;
  g_mutex_lock (&t->lock);
  write_all (stream == AIRLOCK_STDIO_STDERR ? STDERR_FILENO : STDOUT_FILENO, (const char *) data,
             len);
  t->last_was_newline = data[len - 1] == '\n';
  g_mutex_unlock (&t->lock);
}

/* The printer: each of our lines on stderr, on a line of its own (after
 * the shell's partial line, if any), marked.  An empty string ends it. */
static gpointer
printer_main (gpointer data)
{
  Terminal *t = data;

  for (;;)
    {
      g_autofree char *text = g_async_queue_pop (t->lines);
      const char *eol = raw_active && isatty (STDERR_FILENO) ? "\r\n" : "\n";
      g_autoptr (GString) line = NULL;

      if (!*text)
        break;
      line = g_string_new (NULL);
      g_mutex_lock (&t->lock);
      if (!t->last_was_newline)
        g_string_append (line, eol);
      if (t->color)
        g_string_append (line, "\033[7m[airlock]\033[0m \033[36m");
      else
        g_string_append (line, "[airlock] ");
      g_string_append (line, text);
      if (t->color)
        g_string_append (line, "\033[0m");
      g_string_append (line, eol);
      write_all (STDERR_FILENO, line->str, line->len);
      t->last_was_newline = TRUE;
      g_mutex_unlock (&t->lock);
    }
  return NULL;
}

/* Queues one line for the printer.  @text comes from the guest (escaped
 * by the decoder); anything that could still steer a terminal is
 * replaced. */
static void
terminal_line (Terminal *t, const char *text)
{
  char *line = g_strdup (text);

  for (char *p = line; *p; p++)
    if ((guchar) *p < 0x20 || *p == 0x7f)
      *p = '?';
  if (!*line)
    {
      g_free (line);
      line = g_strdup ("?");
    }
  g_async_queue_push (t->lines, line);
}

static gboolean
is_exec (const AirlockEvent *ev)
{
  return ev->syscall_name
         && (g_str_equal (ev->syscall_name, "execve") || g_str_equal (ev->syscall_name, "execveat"));
}

/* "wget[7]": the process as its argv[0] names it (busybox applets share
 * one executable), its pid in the workload's namespace. */
static char *
process_name (const AirlockEvent *ev)
{
  const char *name = ev->argv && ev->argv[0] && *ev->argv[0] ? ev->argv[0] : ev->exe;
  const char *base = name ? strrchr (name, '/') : NULL;

  base = base && base[1] ? base + 1 : name;
  return g_strdup_printf ("%s[%u]", base ? base : "?", ev->has_nspid ? ev->nspid : ev->pid);
}

/* "wget[7] connect continue inet/stream/tcp 198.51.100.80:80: ECONNREFUSED"
 * (the key line carries " dns=NAME" for each name a query asked for). */
static void
print_attempt (Terminal *t, const AirlockEvent *ev)
{
  g_autofree char *who = process_name (ev);
  g_autofree char *key = airlock_event_key_line (ev);
  g_autofree char *outcome = airlock_event_outcome (ev);
  g_autofree char *text = g_strdup_printf ("%s %s: %s", who, key ? key : "?",
                                           outcome && *outcome ? outcome : "?");

  terminal_line (t, text);
}

/* Whether @call's line waits for its RESULT, so that it has the outcome:
 * calls the supervisor performs (sends with an address; connect when no
 * kernel-hook recorder runs) and connects on inet sockets, whose return
 * the kernel-hook recorder reports.  The rest are printed at once. */
static gboolean
printed_at_result (const AirlockEvent *call)
{
  if (call->action == AIRLOCK_ACTION_EMULATE)
    return TRUE;
  return call->action == AIRLOCK_ACTION_CONTINUE && g_strcmp0 (call->syscall_name, "connect") == 0
         && call->has_socket && (call->sock_family == AF_INET || call->sock_family == AF_INET6);
}

/* Each supervisor record as its frame is accepted (the evidence thread,
 * the VM's lock held: printing only). */
static void
shell_event (const AirlockEvent *ev, const AirlockEvent *call, gpointer user_data)
{
  Terminal *t = user_data;

  if (ev->phase == AIRLOCK_PHASE_CONTROLS)
    {
      if (ev->kind == AIRLOCK_EVENT_SYSCALL && !is_exec (ev))
        t->n_controls++;
      return;
    }
  if (ev->kind == AIRLOCK_EVENT_WORKLOAD_START && t->n_controls > 0)
    {
      g_autofree char *text = g_strdup_printf ("negative controls: %u records, before the shell",
                                               t->n_controls);

      terminal_line (t, text);
    }
  else if (ev->kind == AIRLOCK_EVENT_SYSCALL && is_exec (ev))
    {
      /* The first one is the shell itself: say which it is.  Commands the
       * shell runs are in the bundle's events, not printed. */
      if (!t->shell_named && ev->path)
        {
          g_autofree char *text = g_str_equal (ev->path, STATIC_SHELL)
            ? g_strdup_printf ("shell: %s, airlock's static busybox (the image has no /bin/sh), "
                               "read-only", ev->path)
            : g_strdup_printf ("shell: %s, the image's own", ev->path);

          t->shell_named = TRUE;
          terminal_line (t, text);
          shell_runs ();
        }
    }
  else if (ev->kind == AIRLOCK_EVENT_SYSCALL && !printed_at_result (ev))
    print_attempt (t, ev);
  else if (ev->kind == AIRLOCK_EVENT_RESULT && call && call->phase != AIRLOCK_PHASE_CONTROLS
           && printed_at_result (call))
    print_attempt (t, call);
}

static void
printer_stop (Terminal *t)
{
  g_async_queue_push (t->lines, g_strdup (""));
  g_thread_join (t->printer);
  g_async_queue_unref (t->lines);
  g_mutex_clear (&t->lock);
}

/* ---- signals: window size, the end ---- */

typedef struct {
  AirlockVm *vm;
  GThread *thread;
  gboolean tty;             /* window sizes go to the guest's terminal */
  volatile int ended_by;    /* the signal that ended the session, or 0 */
} Signals;

static gpointer
signals_main (gpointer data)
{
  Signals *sg = data;

  for (;;)
    {
      char c;
      ssize_t n = read (signal_pipe[0], &c, 1);
      guint16 rows, cols;

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0 || c == 'q')
        break;
      if (c == 'w' && sg->tty)
        {
          window_size (&rows, &cols);
          /* A resize while the run ends has nobody to go to: not an error. */
          (void) airlock_vm_send_winsize (sg->vm, rows, cols, NULL);
        }
      else if (c != 'w' && !sg->ended_by)
        {
          const char *name = sigabbrev_np (c);
          g_autofree char *why = name ? g_strdup_printf ("the session was ended by SIG%s", name)
                                      : g_strdup_printf ("the session was ended by signal %d", c);

          sg->ended_by = c;
          airlock_vm_cancel (sg->vm, why);
        }
    }
  return NULL;
}

/* ---- the command ---- */

static int
exit_for_start_error (const GError *error)
{
  if (error->domain == AIRLOCK_IMAGE_ERROR)
    return harness_exit_for_image_error (error);
  if (error->domain == AIRLOCK_RUN_SPEC_ERROR
      || g_error_matches (error, AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_INVALID)
      || g_error_matches (error, AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_BUNDLE))
    return HARNESS_EXIT_USAGE;
  return HARNESS_EXIT_SETUP;
}

/* After the session: how it ended, what it tried, the bundle. */
static int
report (const char *arch_name, AirlockResult *result, guint timeout_s)
{
  GPtrArray *attempts = airlock_result_get_attempts (result);
  const char *const *reasons = airlock_result_get_reasons (result);
  guint n_denied = 0, n_egress = 0;
  int wait_status;
  int status = HARNESS_EXIT_OK;

  for (guint i = 0; i < attempts->len; i++)
    {
      const AirlockAttempt *a = attempts->pdata[i];

      n_denied += a->denied;
      n_egress += a->egress;
    }
  if (!airlock_result_is_complete (result))
    {
      fprintf (stderr, "airlock: %s: the session's evidence is incomplete: %s\n", arch_name,
               airlock_result_get_incomplete_reason (result));
      status = HARNESS_EXIT_INCONCLUSIVE;
    }
  if (airlock_result_get_wait_status (result, &wait_status))
    {
      g_autofree char *how = airlock_wait_status_to_string ((guint32) wait_status);

      fprintf (stderr, "airlock: %s: the shell %s\n", arch_name, how);
    }
  else if (airlock_result_is_complete (result))
    {
      const AirlockVerdict *v = airlock_result_get_verdict_details (result);

      /* Which limit, and how much guest and wall time the session had. */
      if (v->observation)
        fprintf (stderr, "airlock: %s: the shell's time limit ended it: %s\n", arch_name,
                 v->observation);
      else
        fprintf (stderr, "airlock: %s: the shell's time limit (%u s) ended it\n", arch_name,
                 timeout_s);
    }
  fprintf (stderr, "airlock: %s: %u network call(s) recorded, %u to a destination off the guest, "
           "%u denied; verdict under the default policy: %s\n", arch_name, attempts->len,
           n_egress, n_denied,
           airlock_verdict_kind_to_string (airlock_result_get_verdict (result)));
  for (guint i = 0; reasons && reasons[i]; i++)
    fprintf (stderr, "airlock: %s:   %s\n", arch_name, reasons[i]);
  if (airlock_result_get_bundle_dir (result))
    {
      if (airlock_result_get_bundle_error (result))
        {
          fprintf (stderr, "airlock shell: %s: the bundle '%s' is incomplete: %s\n", arch_name,
                   airlock_result_get_bundle_dir (result), airlock_result_get_bundle_error (result));
          status = HARNESS_EXIT_SETUP;
        }
      else
        fprintf (stderr, "airlock: %s: evidence bundle in %s\n", arch_name,
                 airlock_result_get_bundle_dir (result));
    }
  return status;
}

int
cmd_shell (int argc, char **argv)
{
  g_autofree char *arch_name = NULL;
  g_autofree char *image_ref = NULL;
  g_autofree char *out_dir = NULL;
  g_autofree char *bundle_dir = NULL;
  g_autofree char *gate_id = NULL;
  g_autofree char *record = NULL;
  g_autofree char *uri = NULL;
  g_autofree char *accel_name = NULL;
  g_autofree char *cache_dir = NULL;
  g_autofree char *max_image_size = NULL;
  g_autofree char *clock_name = NULL;
  gboolean controls = FALSE;
  int timeout_s = DEFAULT_TIMEOUT_S;
  int guest_time_s = HARNESS_GUEST_TIME_UNSET;
  /* Not warped by default, unlike run and gate: a session waits for a
   * person most of the time, and a warped clock would run hours ahead
   * while they type (then its guest-time limit would end the session). */
  AirlockClock clock = AIRLOCK_CLOCK_REAL;
  int boot_timeout = 60;
  AirlockArch arch;
  AirlockAccel accel = AIRLOCK_ACCEL_AUTO;
  AirlockSessionOptions session_opts = { 0 };
  g_autoptr (GError) error = NULL;
  g_autoptr (GOptionContext) ctx = NULL;
  g_autoptr (AirlockSession) session = NULL;
  g_autoptr (AirlockCase) c = NULL;
  g_autoptr (AirlockRun) run = NULL;
  g_autoptr (AirlockResult) result = NULL;
  g_autoptr (GInputStream) stdin_stream = NULL;
  Terminal term = { .last_was_newline = TRUE };
  Signals signals = { NULL };
  gboolean tty_in = isatty (STDIN_FILENO);
  g_auto (GStrv) serve = NULL;
  AirlockVm *vm;
  guint16 rows, cols;
  int status;
  GOptionEntry entries[] = {
    { "arch", 'a', 0, G_OPTION_ARG_STRING, &arch_name, "amd64 or arm64 (one: a shell is one session)", "ARCH" },
    { "image", 'i', 0, G_OPTION_ARG_STRING, &image_ref,
      "OCI image whose root the shell runs in: oci:DIR[:TAG], oci-archive:FILE[:TAG], "
      "docker-archive:FILE, docker://NAME[:TAG|@DIGEST] or containers-storage:NAME", "REF" },
    { "controls", 0, 0, G_OPTION_ARG_NONE, &controls,
      "run the negative controls first, in the same boot (a bundle that can pass a gate's checks)", NULL },
    { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out_dir,
      "write the session's evidence bundle to DIR/ARCH/ (docs/bundle.md; never overwritten)", "DIR" },
    { "timeout", 't', 0, G_OPTION_ARG_INT, &timeout_s,
      "end the session after S seconds (default: 3600): of wall time under --clock warp, of guest time under --clock real", "S" },
    { "clock", 0, 0, G_OPTION_ARG_STRING, &clock_name,
      "the guest's clock: real (default) or warp (it runs ahead while the guest is idle, so a sleep passes at once, and so does a pause at the prompt; TCG only)", "CLOCK" },
    { "guest-time", 0, 0, G_OPTION_ARG_INT, &guest_time_s,
      "with --clock warp: end the session after S seconds of guest time too (default: 21600, six hours)", "S" },
    { "connect", 'c', 0, G_OPTION_ARG_STRING, &uri,
      "libvirt URI (default: $AIRLOCK_CONNECT, else the embedded driver)", "URI" },
    { "accel", 0, 0, G_OPTION_ARG_STRING, &accel_name, "auto, tcg or kvm (default: auto)", "ACCEL" },
    { "boot-timeout", 0, 0, G_OPTION_ARG_INT, &boot_timeout, "seconds from start to hello (default: 60)", "S" },
    { "cache-dir", 0, 0, G_OPTION_ARG_FILENAME, &cache_dir, "cache directory (default: $AIRLOCK_CACHE_DIR or ~/.cache/airlock)", "DIR" },
    { "max-image-size", 0, 0, G_OPTION_ARG_STRING, &max_image_size,
      "the most the image's layers may decompress to, all together, e.g. 20G (default: $AIRLOCK_MAX_IMAGE_SIZE, else 8G); over it: exit 17", "SIZE" },
    { "serve", 0, 0, G_OPTION_ARG_STRING_ARRAY, &serve, HARNESS_SERVE_HELP, "NAME:PORT=FILE" },
    { NULL },
  };

  ctx = g_option_context_new ("- an interactive shell in an image's root, under the supervisor, "
                              "every network call printed as it happens");
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "airlock shell: %s\n", error->message);
      return HARNESS_EXIT_USAGE;
    }
  if (argc > 1)
    {
      fprintf (stderr, "airlock shell: unexpected argument '%s'\n", argv[1]);
      return HARNESS_EXIT_USAGE;
    }
  if (max_image_size && !airlock_image_parse_size (max_image_size, &session_opts.max_image_bytes, &error))
    {
      fprintf (stderr, "airlock shell: --max-image-size: %s\n", error->message);
      return HARNESS_EXIT_USAGE;
    }
  if (!arch_name || !airlock_arch_from_string (arch_name, &arch))
    {
      fprintf (stderr, "airlock shell: --arch amd64 or --arch arm64 is required (one arch)\n");
      return HARNESS_EXIT_USAGE;
    }
  if (!image_ref)
    {
      fprintf (stderr, "airlock shell: --image REF is required\n");
      return HARNESS_EXIT_USAGE;
    }
  if (accel_name && !airlock_accel_from_string (accel_name, &accel))
    {
      fprintf (stderr, "airlock shell: unknown accelerator '%s' (expected auto, tcg or kvm)\n",
               accel_name);
      return HARNESS_EXIT_USAGE;
    }
  if (timeout_s <= 0 || timeout_s > MAX_TIMEOUT_S || boot_timeout <= 0 || boot_timeout > MAX_TIMEOUT_S)
    {
      fprintf (stderr, "airlock shell: --timeout and --boot-timeout must be 1 to %d seconds\n",
               MAX_TIMEOUT_S);
      return HARNESS_EXIT_USAGE;
    }
  if (!harness_parse_clock ("airlock shell", clock_name, accel, guest_time_s, MAX_GUEST_TIME_S,
                            &clock))
    return HARNESS_EXIT_USAGE;
  if (out_dir)
    {
      bundle_dir = g_build_filename (out_dir, airlock_arch_to_string (arch), NULL);
      if (g_file_test (bundle_dir, G_FILE_TEST_EXISTS | G_FILE_TEST_IS_SYMLINK))
        {
          fprintf (stderr, "airlock shell: '%s' exists; a bundle is never overwritten\n", bundle_dir);
          return HARNESS_EXIT_USAGE;
        }
      record = g_build_filename (out_dir, AIRLOCK_BUNDLE_SET_FILE, NULL);
      if (g_file_test (record, G_FILE_TEST_EXISTS | G_FILE_TEST_IS_SYMLINK))
        {
          fprintf (stderr, "airlock shell: '%s' exists; a set of bundles is never overwritten\n",
                   record);
          return HARNESS_EXIT_USAGE;
        }
    }

  /* The image resolved for the arch before anything starts, as run and
   * gate check theirs: a mistyped reference or a missing arch is one
   * message, with no session, thread or guest-image build behind it.  The
   * run resolves it again, as it would any reference. */
  {
    g_autoptr (AirlockImageSource) source = airlock_image_source_open (image_ref, &error);
    g_autoptr (AirlockImage) image = source ? airlock_image_resolve (source, arch, &error) : NULL;

    if (!image)
      {
        fprintf (stderr, "airlock shell: %s: %s\n", airlock_arch_to_string (arch), error->message);
        return harness_exit_for_image_error (error);
      }
  }

  session_opts.uri = uri;
  session_opts.cache_dir = cache_dir;
  session_opts.accel = accel;
  session_opts.clock = clock;
  session_opts.boot_timeout_ms = (guint) boot_timeout * 1000;
  session_opts.progress = harness_progress;
  session = airlock_session_new (arch, &session_opts, &error);
  harness_progress_done ();
  if (!session)
    {
      fprintf (stderr, "airlock shell: %s: %s\n", airlock_arch_to_string (arch), error->message);
      return HARNESS_EXIT_SETUP;
    }

  g_mutex_init (&term.lock);
  term.color = isatty (STDERR_FILENO);
  term.lines = g_async_queue_new_full (g_free);
  term.printer = g_thread_new ("airlock-printer", printer_main, &term);
  window_size (&rows, &cols);
  stdin_stream = g_unix_input_stream_new (STDIN_FILENO, FALSE);
  c = airlock_case_new (image_ref);
  airlock_case_set_name (c, "shell");
  airlock_case_set_shell (c, TRUE);
  /* A terminal in the guest when ours is one (`docker run -it`); with
   * input from a pipe or a file, pipes (`docker run -i`): the shell reads
   * commands until their end, which a terminal could not pass on as
   * reliably (an end-of-file character typed ahead of a line editor is
   * lost). */
  airlock_case_set_tty (c, tty_in, rows, cols);
  airlock_case_set_controls (c, controls);
  airlock_case_set_timeout (c, (guint) timeout_s);
  if (!harness_apply_serve (c, (const char *const *) serve, NULL, &error))
    {
      fprintf (stderr, "airlock shell: %s\n", error->message);
      return HARNESS_EXIT_USAGE;
    }
  if (guest_time_s > 0)
    airlock_case_set_guest_time (c, (guint) guest_time_s);
  /* As `docker run -t` does: programs that look at TERM get one every
   * image's terminfo knows. */
  if (tty_in)
    airlock_case_set_env (c, "TERM", "xterm");
  airlock_case_set_stdin_stream (c, stdin_stream);
  airlock_case_set_output_func (c, shell_output, &term);
  airlock_case_set_event_func (c, shell_event, &term);
  airlock_case_set_bundle_dir (c, bundle_dir);
  if (out_dir)
    {
      gate_id = airlock_bundle_set_new_id ();
      airlock_case_set_bundle_gate (c, gate_id);
    }

  run = airlock_session_start (session, c, &error);
  harness_progress_done ();
  if (!run)
    {
      fprintf (stderr, "airlock shell: %s: %s\n", airlock_arch_to_string (arch), error->message);
      printer_stop (&term);
      return exit_for_start_error (error);
    }
  vm = airlock_run_get_vm (run);
  /* The signal thread and the handlers first: from now on a signal ends
   * the run through it (the VM torn down, the bundle finished). */
  signals.vm = vm;
  signals.tty = tty_in;
  if (pipe2 (signal_pipe, O_CLOEXEC) == 0)
    signals.thread = g_thread_new ("airlock-signals", signals_main, &signals);
  install_handlers ();
  for (guint i = 0; i < airlock_vm_get_swept (vm)->len; i++)
    fprintf (stderr, "airlock: removed domain '%s' left behind by a crashed run\n",
             (const char *) airlock_vm_get_swept (vm)->pdata[i]);
  if (airlock_vm_get_accel_notice (vm))
    fprintf (stderr, "airlock: %s: %s\n", airlock_arch_to_string (arch),
             airlock_vm_get_accel_notice (vm));
  fprintf (stderr, "airlock: %s: a shell in %s (%s); every network call is shown as "
           "\"[airlock] …\"; %s\n",
           airlock_arch_to_string (arch), image_ref, airlock_vm_get_accel (vm),
           tty_in ? "'exit' or Ctrl-D at the prompt ends it"
                  : "its commands come from standard input, to its end");

  /* From here our keys are the guest's: raw mode, restored on every way
   * out. */
  if (tty_in && !terminal_enter_raw ())
    fprintf (stderr, "airlock shell: cannot put the terminal in raw mode: %s\n", g_strerror (errno));
  /* A size change since the spec was made. */
  if (tty_in)
    on_winch (SIGWINCH);

  result = airlock_run_wait (run, &error);

  if (signals.thread)
    {
      char q = 'q';

      (void) !write (signal_pipe[1], &q, 1);
      g_thread_join (signals.thread);
    }
  /* Every line queued so far is out before the terminal changes back. */
  printer_stop (&term);
  terminal_restore ();
  if (!term.last_was_newline)
    fputc ('\n', stderr);
  if (!result)
    {
      fprintf (stderr, "airlock shell: %s: %s\n", airlock_arch_to_string (arch), error->message);
      return HARNESS_EXIT_SETUP;
    }
  status = report (airlock_arch_to_string (arch), result, (guint) timeout_s);
  if (out_dir)
    {
      /* A set of one, as a gate's --out is: `airlock verify DIR` takes it. */
      gboolean arches[AIRLOCK_N_ARCHES] = { FALSE };
      const AirlockImage *image = airlock_result_get_image (result);
      AirlockBundleSetInput in = {
        .gate_id = gate_id,
        .arches = arches,
        .reference = image ? image->reference : NULL,
        .index_digest = image ? image->index_digest : NULL,
      };

      g_autoptr (GError) set_error = NULL;

      arches[arch] = TRUE;
      if (!airlock_bundle_set_write (out_dir, &in, &set_error))
        {
          fprintf (stderr, "airlock shell: the set record: %s\n", set_error->message);
          status = MAX (status, HARNESS_EXIT_SETUP);
        }
    }
  if (signals.ended_by)
    {
      /* Ended by a signal: end as it would have, now that the VM is gone
       * and the bundle written. */
      g_clear_pointer (&result, airlock_result_free);
      g_clear_pointer (&run, airlock_run_free);
      fflush (NULL);
      signal (signals.ended_by, SIG_DFL);
      raise (signals.ended_by);
    }
  return status;
}
