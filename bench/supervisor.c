/* bench/supervisor: what the in-guest supervisor costs the workload, next
 * to floors measured in the same run (issue 3, "Benchmark").
 *
 * Every measurement is one boot of the testroot image running one of the
 * bench-* test programs (tests/guest/bench.c), which time their own loop
 * with CLOCK_MONOTONIC inside the guest and print ns per iteration; boot,
 * handshake and teardown never enter the numbers.  The floor is the same
 * program in the same kind of guest with `airlock.test=unsupervised`: the
 * workload in the same namespaces, without the seccomp filter.
 *
 *   syscalls  getpid + stat("/") + a 1-byte read of /dev/zero, which the
 *             filter sends nowhere: the cost of its constant-action path.
 *             Issue 8 expects under 3% here.  Also under
 *             `strace -f -e trace=network` (Debian's, in the testroot; it
 *             needs ptrace, which the supervisor denies, so it runs in the
 *             unsupervised guest), the tracer the supervisor replaced.
 *   connect   connect() of a UDP socket to 192.0.2.1:9, which the guest
 *             cannot route (no NIC): each is recorded by the kernel-hook
 *             recorder at the kernel's connect hook, its return at the
 *             call's exit (guest/hooks.h); without the recorder, each is
 *             notified, recorded, emulated and answered by the supervisor.
 *             Reported as the added µs per call.  Issue 22 expects at most
 *             100 µs under TCG.
 *   sendto    sendto() of one byte from a UDP socket to 127.0.0.1:9: each
 *             recorded at the socket's send hook, its return at the call's
 *             exit; and again with `airlock.test=hooks-off`, the
 *             supervisor's own path where the recorder cannot run
 *             (notified, recorded, sent by the supervisor from its copy),
 *             which was every run's before sends moved to the hooks.
 *             Reported as the added µs per call; --connects sets its loop
 *             too.
 *   write     1-byte write(2)s to a file in /tmp.  With the kernel-hook
 *             recorder (guest/hooks.h; both arches) the filter lets writes
 *             through and nothing looks at a write to a file; without it
 *             every write on fd > 2 goes to the supervisor (it could be a
 *             socket) and continues.  Issue
 *             22 expects at most 1.2x the floor.
 *   filter    the syscalls loop again, in ONE unsupervised boot per round:
 *             children with no filter, with a one-instruction allow-all
 *             filter and with the supervisor's own filter, alternating
 *             (bench-filter).  Boots differ by several percent under TCG;
 *             within a boot the three are paired, which splits the
 *             supervised overhead into what the kernel charges for any
 *             seccomp filter and what airlock's filter adds to that.
 *
 * Each measurement is repeated (--repeat) and its median taken; within a
 * round, floor and supervised runs alternate and swap order every round,
 * so that machine noise hits both alike.  A benchmark, not a test: nothing
 * fails on a slow ratio; the exit status is 1 when a run fails outright
 * (the reason and the console's tail are printed).  No traffic leaves the
 * host: the guest has no network device. */
#include "config.h"

#include "airlock.h"
#include "bench-common.h"
#include "stats.h"
#include "evidence/event.h"
#include "protocol.h"
#include "summary.h"

#include <errno.h>
#include <gio/gio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_RUN_FAILED 1
#define EXIT_USAGE 2

#define TESTROOT "/airlock/testroot"
#define GUEST_MEMORY_MIB 512
#define TAIL_BYTES 3000
/* The guest ends a workload after this long (AirlockRunSpec.timeout_ms);
 * the host's run timeout follows from it. */
#define WORKLOAD_TIMEOUT_MS (20 * 60 * 1000)
/* Issue 8: under 3% on calls the filter does not trace (issue 3 asked 5%). */
#define UNTRACED_TARGET 1.03
#define WRITE_TARGET 1.2
/* Issue 22: each recorded connect at most 100 µs under TCG. */
#define CONNECT_TARGET_US 100.0

static const char *const workload_envp[] = {
  "PATH=/usr/bin:/bin", "HOME=/root", NULL,
};

typedef enum {
  M_SYSCALLS_FLOOR,
  M_SYSCALLS_SUPERVISED,
  M_SYSCALLS_STRACE,
  M_CONNECT_FLOOR,
  M_CONNECT_SUPERVISED,
  M_WRITE_FLOOR,
  M_WRITE_SUPERVISED,
  M_SENDTO_FLOOR,
  M_SENDTO_SUPERVISED,
  M_SENDTO_NOTIFIED,
  N_MEASUREMENTS,
} Measurement;

typedef struct {
  const char *label;
  const char *command;       /* the testprog command (/bin/COMMAND) */
  const char *what;          /* its "bench: WHAT" line */
  const char *test_mode;     /* airlock.test: "unsupervised" for a floor; NULL supervised */
  gboolean strace;
  Measurement floor;         /* what its ratio is against */
} MeasurementInfo;

static const MeasurementInfo measurements[N_MEASUREMENTS] = {
  [M_SYSCALLS_FLOOR] = { "syscalls, no filter (floor)", "bench-syscalls", "syscalls",
                         "unsupervised", FALSE, M_SYSCALLS_FLOOR },
  [M_SYSCALLS_SUPERVISED] = { "syscalls, supervised", "bench-syscalls", "syscalls", NULL, FALSE,
                              M_SYSCALLS_FLOOR },
  [M_SYSCALLS_STRACE] = { "syscalls, strace -f -e trace=network", "bench-syscalls", "syscalls",
                          "unsupervised", TRUE, M_SYSCALLS_FLOOR },
  [M_CONNECT_FLOOR] = { "connect, no filter (floor)", "bench-connect", "connect", "unsupervised",
                        FALSE, M_CONNECT_FLOOR },
  [M_CONNECT_SUPERVISED] = { "connect, supervised", "bench-connect", "connect", NULL, FALSE,
                             M_CONNECT_FLOOR },
  [M_WRITE_FLOOR] = { "write to a file, no filter (floor)", "bench-write", "write",
                      "unsupervised", FALSE, M_WRITE_FLOOR },
  [M_WRITE_SUPERVISED] = { "write to a file, supervised", "bench-write", "write", NULL, FALSE,
                           M_WRITE_FLOOR },
  [M_SENDTO_FLOOR] = { "sendto, no filter (floor)", "bench-sendto", "sendto", "unsupervised",
                       FALSE, M_SENDTO_FLOOR },
  [M_SENDTO_SUPERVISED] = { "sendto, supervised", "bench-sendto", "sendto", NULL, FALSE,
                            M_SENDTO_FLOOR },
  [M_SENDTO_NOTIFIED] = { "sendto, supervised, no recorder hooks", "bench-sendto", "sendto",
                          "hooks-off", FALSE, M_SENDTO_FLOOR },
};

/* The order of one round's runs: each floor next to what is measured
 * against it. */
static const Measurement round_order[N_MEASUREMENTS] = {
  M_SYSCALLS_FLOOR, M_SYSCALLS_SUPERVISED, M_SYSCALLS_STRACE,
  M_CONNECT_FLOOR, M_CONNECT_SUPERVISED,
  M_WRITE_FLOOR, M_WRITE_SUPERVISED,
  M_SENDTO_FLOOR, M_SENDTO_SUPERVISED, M_SENDTO_NOTIFIED,
};

/* bench-filter's variants, in the order its lines name them. */
typedef enum {
  F_NONE,
  F_CONSTANT,
  F_AIRLOCK,
  N_FILTERS,
} FilterVariant;

static const char *const filter_whats[N_FILTERS] = {
  "filter-none", "filter-constant", "filter-airlock",
};

typedef struct {
  int repeat;
  int syscalls;
  int strace_syscalls;
  int connects;
  int writes;
  int filter_syscalls;
  int filter_rounds;
  int wait_idle_s;     /* before a run, wait this long for other QEMUs to end */
  const char *cache_dir;
} BenchOptions;

typedef struct {
  AirlockArch arch;
  AirlockGuestImage *image;
  GArray *samples[N_MEASUREMENTS];   /* double: ns per iteration */
  GArray *filter[N_FILTERS];         /* double: ns per iteration, element i of each from
                                      * the same round of the same boot */
  GArray *boot_s;                    /* double: domain begin → trailer, every run */
  guint noisy_runs;                  /* runs that started with another QEMU running */
  char *failure;
} ArchBench;


/* Default iterations per arch, chosen so each run's loop takes 5-20 s
 * under TCG on a 2-core x86 host (one iteration of the syscalls loop:
 * ~11 µs on either guest; before the arm64 guest booted with kpti=0 its
 * system calls were ~10x slower, and its counts were a tenth of these).
 * strace stops the workload twice per system call (no seccomp-bpf filter
 * unless asked): ~40x the floor.  Every number is per iteration, so a
 * shorter loop measures the same thing. */
static const struct {
  int syscalls, strace_syscalls, connects, writes;
} arch_defaults[AIRLOCK_N_ARCHES] = {
  [AIRLOCK_ARCH_AMD64] = { 1000000, 20000, 2000, 20000 },
  [AIRLOCK_ARCH_ARM64] = { 1000000, 20000, 2000, 20000 },
};

static long
iterations_of (Measurement m, const BenchOptions *o, AirlockArch arch)
{
  switch (m)
    {
    case M_SYSCALLS_FLOOR:
    case M_SYSCALLS_SUPERVISED:
      return o->syscalls ? o->syscalls : arch_defaults[arch].syscalls;
    case M_SYSCALLS_STRACE:
      return o->strace_syscalls ? o->strace_syscalls : arch_defaults[arch].strace_syscalls;
    case M_CONNECT_FLOOR:
    case M_CONNECT_SUPERVISED:
    case M_SENDTO_FLOOR:
    case M_SENDTO_SUPERVISED:
    case M_SENDTO_NOTIFIED:
      return o->connects ? o->connects : arch_defaults[arch].connects;
    case M_WRITE_FLOOR:
    case M_WRITE_SUPERVISED:
      return o->writes ? o->writes : arch_defaults[arch].writes;
    case N_MEASUREMENTS:
      break;
    }
  g_assert_not_reached ();
}

static void
arch_bench_clear (ArchBench *ab)
{
  g_clear_pointer (&ab->image, airlock_guest_image_free);
  for (guint m = 0; m < N_MEASUREMENTS; m++)
    g_clear_pointer (&ab->samples[m], g_array_unref);
  for (guint f = 0; f < N_FILTERS; f++)
    g_clear_pointer (&ab->filter[f], g_array_unref);
  g_clear_pointer (&ab->boot_s, g_array_unref);
  g_clear_pointer (&ab->failure, g_free);
}

static void
print_tail (const char *what, const char *data, gsize len)
{
  gsize from = len > TAIL_BYTES ? len - TAIL_BYTES : 0;

  fprintf (stderr, "bench/supervisor: %s, last %" G_GSIZE_FORMAT " bytes:\n%.*s\n", what,
           len - from, (int) (len - from), data + from);
}

/* The workload's "bench: WHAT N ns_per_iter X" line in the console (the
 * supervisor relays it as "airlock-init: workload: testprog: COMMAND: …"),
 * and its "exit 0".  Returns FALSE with @error set when either is missing
 * or the count is not the one asked for. */
static gboolean
parse_result (const char *console, const MeasurementInfo *info, long n, double *ret_ns,
              GError **error)
{
  g_autofree char *result_prefix = g_strdup_printf ("testprog: %s: bench: %s ", info->command,
                                                    info->what);
  g_autofree char *exit_line = g_strdup_printf ("testprog: %s: exit 0", info->command);
  g_auto (GStrv) lines = g_strsplit (console, "\n", -1);
  gboolean exited = FALSE, found = FALSE;
  long got_n = -1;
  double ns = -1;

  for (guint i = 0; lines[i]; i++)
    {
      const char *p = strstr (lines[i], result_prefix);

      g_strchomp (lines[i]);
      if (p && sscanf (p + strlen (result_prefix), "%ld ns_per_iter %lf", &got_n, &ns) == 2)
        found = TRUE;
      if (g_str_has_suffix (lines[i], exit_line))
        exited = TRUE;
    }
  if (!found || !exited)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED, "'%s' printed %s", info->command,
                   !found ? "no 'bench:' result" : "its result but not 'exit 0'");
      return FALSE;
    }
  if (got_n != n || ns <= 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                   "'%s' ran %ld iterations (%.1f ns each), %ld were asked for", info->command,
                   got_n, ns, n);
      return FALSE;
    }
  *ret_ns = ns;
  return TRUE;
}

/* Counts the records of system call @name in the run's log. */
static guint
count_records (AirlockVm *vm, const char *name)
{
  AirlockEventLog *log = airlock_vm_get_events (vm);
  GPtrArray *events = log ? airlock_event_log_get_events (log) : NULL;
  guint n = 0;

  for (guint i = 0; events && i < events->len; i++)
    {
      const AirlockEvent *ev = events->pdata[i];

      if (ev->kind == AIRLOCK_EVENT_SYSCALL && g_strcmp0 (ev->syscall_name, name) == 0)
        n++;
    }
  return n;
}

/* One boot of the testroot running @argv, in test mode @test_mode (NULL:
 * supervised as a user's run is).  Returns the
 * VM (its console holds the program's lines), or NULL with @error set when
 * it cannot start or the run is not complete (the console's tail printed). */
static AirlockVm *
boot_program (ArchBench *ab, const char *const *argv, const char *test_mode,
              const BenchOptions *o, GError **error)
{
  AirlockRunSpec spec = {
    .argv = argv,
    .envp = workload_envp,
    .cwd = "/",
    .root = TESTROOT,
    .timeout_ms = WORKLOAD_TIMEOUT_MS,
    .hostname = "airlock-bench",
  };
  /* TCG explicitly, like bench/boot: the same accelerator for every run. */
  AirlockVmOptions vm_opts = {
    .cache_dir = o->cache_dir,
    .accel = AIRLOCK_ACCEL_TCG,
    .memory_mib = GUEST_MEMORY_MIB,
    .boot_timeout_ms = 60000,
    .test_mode = test_mode,
    .spec = &spec,
  };
  g_autoptr (AirlockVm) vm = NULL;
  const AirlockVmTimings *t;

  vm = airlock_vm_new (ab->arch, ab->image, &vm_opts, error);
  if (!vm || !airlock_vm_run (vm, error))
    return NULL;
  if (!airlock_vm_is_complete (vm))
    {
      g_autoptr (GBytes) console = airlock_vm_get_console (vm);
      gsize len;
      const char *data = g_bytes_get_data (console, &len);

      print_tail ("console", data, len);
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_FAILED, "the run is not complete: %s",
                   airlock_vm_get_reason (vm));
      return NULL;
    }
  t = airlock_vm_get_timings (vm);
  if (t->begin && t->trailer)
    {
      double secs = (t->trailer - t->begin) / 1e6;

      g_array_append_val (ab->boot_s, secs);
    }
  return g_steal_pointer (&vm);
}

static char *
console_text (AirlockVm *vm)
{
  g_autoptr (GBytes) console = airlock_vm_get_console (vm);

  return g_strndup (g_bytes_get_data (console, NULL), g_bytes_get_size (console));
}

/* One boot, one measurement.  Returns FALSE with @error set when the VM
 * cannot start, the run is not complete, or the workload's result is
 * missing or implausible. */
static gboolean
run_one (ArchBench *ab, Measurement m, const BenchOptions *o, double *ret_ns, GError **error)
{
  const MeasurementInfo *info = &measurements[m];
  long n = iterations_of (m, o, ab->arch);
  g_autofree char *program = g_strdup_printf ("/bin/%s", info->command);
  g_autofree char *count = g_strdup_printf ("%ld", n);
  const char *plain_argv[] = { program, count, NULL };
  /* -o /dev/null: the trace itself is not what is measured, and the
   * console must carry only the workload's lines. */
  const char *strace_argv[] = { "/usr/bin/strace", "-f", "-e", "trace=network", "-o", "/dev/null",
                                program, count, NULL };
  g_autoptr (AirlockVm) vm = NULL;
  g_autofree char *console = NULL;

  vm = boot_program (ab, info->strace ? strace_argv : plain_argv, info->test_mode, o, error);
  if (!vm)
    return FALSE;
  console = console_text (vm);
  if (!parse_result (console, info, n, ret_ns, error))
    {
      print_tail ("console", console, strlen (console));
      return FALSE;
    }
  /* A supervised connect or sendto run is only the number it claims when
   * every call was recorded; and the floor must have recorded none. */
  if (g_str_equal (info->what, "connect") || g_str_equal (info->what, "sendto"))
    {
      guint records = count_records (vm, info->what);
      guint want = info->test_mode && g_str_equal (info->test_mode, "unsupervised") ? 0 : (guint) n;

      if (records != want)
        {
          g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                       "%u %s record(s), expected %u", records, info->what, want);
          return FALSE;
        }
    }
  return TRUE;
}

/* The filter measurement's iterations per child. */
static long
filter_iterations (const BenchOptions *o, AirlockArch arch)
{
  if (o->filter_syscalls)
    return o->filter_syscalls;
  return (o->syscalls ? o->syscalls : arch_defaults[arch].syscalls) / 4;
}

/* One unsupervised boot of bench-filter: --filter-rounds rounds of the
 * three variants, appended to ab->filter.  FALSE with @error set when the
 * run fails or a round's line is missing. */
static gboolean
run_filter (ArchBench *ab, const BenchOptions *o, GError **error)
{
  long n = filter_iterations (o, ab->arch);
  g_autofree char *count = g_strdup_printf ("%ld", n);
  g_autofree char *rounds = g_strdup_printf ("%d", o->filter_rounds);
  const char *argv[] = { "/bin/bench-filter", count, rounds, NULL };
  g_autoptr (AirlockVm) vm = NULL;
  g_autofree char *console = NULL;
  g_auto (GStrv) lines = NULL;
  GArray *got[N_FILTERS] = { NULL };
  gboolean ok = TRUE;
  gboolean exited = FALSE;

  vm = boot_program (ab, argv, "unsupervised", o, error);
  if (!vm)
    return FALSE;
  console = console_text (vm);
  lines = g_strsplit (console, "\n", -1);
  for (guint f = 0; f < N_FILTERS; f++)
    got[f] = g_array_new (FALSE, FALSE, sizeof (double));
  for (guint i = 0; lines[i]; i++)
    {
      const char *p = strstr (lines[i], "testprog: bench-filter: bench: filter-");

      g_strchomp (lines[i]);
      if (g_str_has_suffix (lines[i], "testprog: bench-filter: exit 0"))
        exited = TRUE;
      if (!p)
        continue;
      p += strlen ("testprog: bench-filter: bench: ");
      for (guint f = 0; f < N_FILTERS; f++)
        {
          long got_n = -1;
          double ns = -1;

          if (g_str_has_prefix (p, filter_whats[f]) && p[strlen (filter_whats[f])] == ' '
              && sscanf (p + strlen (filter_whats[f]), " %ld ns_per_iter %lf", &got_n, &ns) == 2
              && got_n == n && ns > 0)
            g_array_append_val (got[f], ns);
        }
    }
  for (guint f = 0; f < N_FILTERS && ok; f++)
    if (!exited || got[f]->len != (guint) o->filter_rounds)
      {
        print_tail ("console", console, strlen (console));
        g_set_error (error, G_IO_ERROR, G_IO_ERROR_FAILED,
                     "bench-filter printed %u '%s' result(s) of %ld iterations, %d were expected%s",
                     got[f]->len, filter_whats[f], n, o->filter_rounds,
                     exited ? "" : ", and no 'exit 0'");
        ok = FALSE;
      }
  for (guint f = 0; f < N_FILTERS; f++)
    {
      if (ok)
        g_array_append_vals (ab->filter[f], got[f]->data, got[f]->len);
      g_array_unref (got[f]);
    }
  return ok;
}

static void
bench_arch (ArchBench *ab, const BenchOptions *o)
{
  const char *arch_name = airlock_arch_to_string (ab->arch);

  for (int round = 0; round < o->repeat && !ab->failure; round++)
    for (guint i = 0; i <= N_MEASUREMENTS && !ab->failure; i++)
      {
        /* Odd rounds run each pair the other way round. */
        Measurement m = i < N_MEASUREMENTS ? round_order[i] : N_MEASUREMENTS;
        g_autoptr (GError) error = NULL;
        double ns = -1;
        guint others = bench_wait_for_other_qemus ("bench/supervisor", o->wait_idle_s);

        if (others > 0)
          {
            fprintf (stderr, "bench/supervisor: %s: %u other QEMU process(es) running: numbers "
                     "will be noisy\n", arch_name, others);
            ab->noisy_runs++;
          }
        /* Last in each round: the filter's cost, paired within one boot. */
        if (m == N_MEASUREMENTS)
          {
            guint from = ab->filter[F_NONE]->len;

            if (!run_filter (ab, o, &error))
              {
                ab->failure = g_strdup_printf ("filter, in one boot (round %d): %s", round + 1,
                                               error->message);
                fprintf (stderr, "bench/supervisor: %s: %s\n", arch_name, ab->failure);
                break;
              }
            for (guint k = from; k < ab->filter[F_NONE]->len; k++)
              fprintf (stderr, "bench/supervisor: %s round %d/%d: filters in one boot: none %.1f, "
                       "constant %.1f, airlock %.1f ns/iter\n", arch_name, round + 1, o->repeat,
                       g_array_index (ab->filter[F_NONE], double, k),
                       g_array_index (ab->filter[F_CONSTANT], double, k),
                       g_array_index (ab->filter[F_AIRLOCK], double, k));
            continue;
          }
        if (round % 2 == 1)
          {
            if (m == M_SYSCALLS_FLOOR)
              m = M_SYSCALLS_STRACE;
            else if (m == M_SYSCALLS_STRACE)
              m = M_SYSCALLS_FLOOR;
            else if (m == M_CONNECT_FLOOR || m == M_WRITE_FLOOR || m == M_SENDTO_FLOOR)
              m = m + 1;
            else if (m == M_CONNECT_SUPERVISED || m == M_WRITE_SUPERVISED
                     || m == M_SENDTO_SUPERVISED)
              m = m - 1;
          }
        if (!run_one (ab, m, o, &ns, &error))
          {
            ab->failure = g_strdup_printf ("%s (round %d): %s", measurements[m].label, round + 1,
                                           error->message);
            fprintf (stderr, "bench/supervisor: %s: %s\n", arch_name, ab->failure);
            break;
          }
        g_array_append_val (ab->samples[m], ns);
        fprintf (stderr, "bench/supervisor: %s round %d/%d: %-38s %12.1f ns/iter\n", arch_name,
                 round + 1, o->repeat, measurements[m].label, ns);
      }
}

/* ---- output ------------------------------------------------------------- */

static double
median_of (const ArchBench *ab, Measurement m)
{
  return stats_of_values (ab->samples[m]).median;
}

static double
ratio_of (const ArchBench *ab, Measurement m)
{
  double floor = median_of (ab, measurements[m].floor);
  double x = median_of (ab, m);

  return floor > 0 && x > 0 ? x / floor : -1;
}

/* Median of each round's ratio to its floor.  A round's two runs are
 * seconds apart, so a slow spell of the machine mostly hits both: the
 * steadier estimate when the spread is wide. */
static double
paired_ratio_of (const ArchBench *ab, Measurement m)
{
  GArray *x = ab->samples[m];
  GArray *floor = ab->samples[measurements[m].floor];
  g_autoptr (GArray) ratios = g_array_new (FALSE, FALSE, sizeof (double));

  for (guint i = 0; i < MIN (x->len, floor->len); i++)
    {
      double r = g_array_index (x, double, i) / g_array_index (floor, double, i);

      g_array_append_val (ratios, r);
    }
  return stats_of_values (ratios).median;
}

/* Median over rounds of filter variant @x's time over variant @y's, each
 * pair from the same round of the same boot. */
static double
filter_ratio (const ArchBench *ab, FilterVariant x, FilterVariant y)
{
  g_autoptr (GArray) ratios = g_array_new (FALSE, FALSE, sizeof (double));

  for (guint i = 0; i < MIN (ab->filter[x]->len, ab->filter[y]->len); i++)
    {
      double r = g_array_index (ab->filter[x], double, i) / g_array_index (ab->filter[y], double, i);

      g_array_append_val (ratios, r);
    }
  return stats_of_values (ratios).median;
}

static const char *
expectation_of (Measurement m)
{
  switch (m)
    {
    case M_SYSCALLS_SUPERVISED:
      return "< 1.03x (issue 8)";
    case M_SYSCALLS_STRACE:
      return "reference";
    case M_CONNECT_SUPERVISED:
    case M_SENDTO_SUPERVISED:
      return "traced: cost shown";
    case M_SENDTO_NOTIFIED:
      return "the fallback";
    case M_WRITE_SUPERVISED:
      return "<= 1.2x (issue 22)";
    default:
      return "floor";
    }
}

static char *
format_ns (double ns)
{
  if (ns < 0)
    return g_strdup ("-");
  if (ns >= 100000)
    return g_strdup_printf ("%.1f µs", ns / 1000);
  return g_strdup_printf ("%.0f ns", ns);
}

static void
print_table (ArchBench *benches, guint n, const BenchOptions *o)
{
  printf ("supervisor overhead under TCG, %d MiB, 1 vCPU; each number the median of %d boot(s), "
          "timed inside the guest;\nfloor = the same program without the seccomp filter "
          "(airlock.test=unsupervised); ratio = of the medians, paired = median of each\n"
          "round's ratio (the steadier one when min-max is wide)\n\n", GUEST_MEMORY_MIB, o->repeat);
  printf ("%-6s %-38s %10s %11s %11s %11s %8s %8s  %s\n", "arch", "measurement", "iterations",
          "per iter", "min", "max", "ratio", "paired", "expected");
  for (guint i = 0; i < n; i++)
    {
      ArchBench *ab = &benches[i];

      for (guint m = 0; m < N_MEASUREMENTS; m++)
        {
          Stats s = stats_of_values (ab->samples[m]);
          g_autofree char *med = format_ns (s.median);
          g_autofree char *min = format_ns (s.min);
          g_autofree char *max = format_ns (s.max);
          double ratio = ratio_of (ab, m);
          double paired = paired_ratio_of (ab, m);
          g_autofree char *ratio_text = ratio > 0 ? g_strdup_printf ("%.3fx", ratio) : g_strdup ("-");
          g_autofree char *paired_text = paired > 0 ? g_strdup_printf ("%.3fx", paired)
                                                    : g_strdup ("-");

          printf ("%-6s %-38s %10ld %11s %11s %11s %8s %8s  %s\n", airlock_arch_to_string (ab->arch),
                  measurements[m].label, iterations_of (m, o, ab->arch), med, min, max, ratio_text,
                  paired_text, expectation_of (m));
        }
    }
  printf ("\nthe same loop in one unsupervised boot per round, %d rounds each, the variants "
          "alternating;\nratios are the median of each round's pair\n\n", o->filter_rounds);
  printf ("%-6s %10s %11s %11s %11s %14s %16s\n", "arch", "iterations", "no filter",
          "constant", "airlock's", "any filter", "airlock vs any");
  for (guint i = 0; i < n; i++)
    {
      ArchBench *ab = &benches[i];
      g_autofree char *none = format_ns (stats_of_values (ab->filter[F_NONE]).median);
      g_autofree char *constant = format_ns (stats_of_values (ab->filter[F_CONSTANT]).median);
      g_autofree char *airlock = format_ns (stats_of_values (ab->filter[F_AIRLOCK]).median);

      if (!ab->filter[F_NONE]->len)
        continue;
      printf ("%-6s %10ld %11s %11s %11s %+13.1f%% %+15.1f%%\n", airlock_arch_to_string (ab->arch),
              filter_iterations (o, ab->arch), none, constant, airlock,
              (filter_ratio (ab, F_CONSTANT, F_NONE) - 1) * 100,
              (filter_ratio (ab, F_AIRLOCK, F_CONSTANT) - 1) * 100);
    }
  printf ("constant: a one-instruction filter that allows everything (what the kernel charges\n"
          "for any seccomp filter on the calls it does not select); airlock's: the supervisor's\n"
          "filter (guest/filter.c), installed by the child without a listener.\n\n");
  for (guint i = 0; i < n; i++)
    {
      ArchBench *ab = &benches[i];
      const char *arch_name = airlock_arch_to_string (ab->arch);
      double untraced = ratio_of (ab, M_SYSCALLS_SUPERVISED);
      double untraced_paired = paired_ratio_of (ab, M_SYSCALLS_SUPERVISED);
      double strace = ratio_of (ab, M_SYSCALLS_STRACE);
      double connect_floor = median_of (ab, M_CONNECT_FLOOR);
      double connect_sup = median_of (ab, M_CONNECT_SUPERVISED);
      double sendto_floor = median_of (ab, M_SENDTO_FLOOR);
      double sendto_sup = median_of (ab, M_SENDTO_SUPERVISED);
      double sendto_notified = median_of (ab, M_SENDTO_NOTIFIED);
      double write_floor = median_of (ab, M_WRITE_FLOOR);
      double write_sup = median_of (ab, M_WRITE_SUPERVISED);
      Stats boot = stats_of_values (ab->boot_s);

      if (ab->failure)
        printf ("%s: failed: %s\n", arch_name, ab->failure);
      if (ab->noisy_runs)
        printf ("%s: %u run(s) started next to another QEMU: noisy\n", arch_name, ab->noisy_runs);
      if (untraced > 0)
        printf ("%s: untraced system calls under the supervisor: %+.1f%% (paired %+.1f%%; expected "
                "under %.0f%%): %s\n", arch_name, (untraced - 1) * 100, (untraced_paired - 1) * 100,
                (UNTRACED_TARGET - 1) * 100,
                untraced < UNTRACED_TARGET ? "as expected" : "ABOVE the expectation");
      if (strace > 0)
        printf ("%s: the same under strace -f -e trace=network: %+.1f%%\n", arch_name,
                (strace - 1) * 100);
      if (connect_floor > 0 && connect_sup > 0)
        printf ("%s: each recorded connect costs %.1f µs more (%.1f µs instead of %.1f µs)\n",
                arch_name, (connect_sup - connect_floor) / 1000, connect_sup / 1000,
                connect_floor / 1000);
      if (sendto_floor > 0 && sendto_sup > 0)
        printf ("%s: each recorded sendto costs %.1f µs more (%.1f µs instead of %.1f µs)\n",
                arch_name, (sendto_sup - sendto_floor) / 1000, sendto_sup / 1000,
                sendto_floor / 1000);
      if (sendto_floor > 0 && sendto_notified > 0)
        printf ("%s: without the recorder's hooks (notified, sent by the supervisor) it costs "
                "%.1f µs more\n", arch_name, (sendto_notified - sendto_floor) / 1000);
      if (write_floor > 0 && write_sup > 0)
        printf ("%s: each write(2) to a file costs %.1f µs more (%.1f µs instead of %.1f µs; "
                "expected at most %.1fx): %s\n", arch_name, (write_sup - write_floor) / 1000,
                write_sup / 1000, write_floor / 1000, WRITE_TARGET,
                write_sup <= write_floor * WRITE_TARGET ? "as expected" : "ABOVE the expectation");
      if (ab->filter[F_NONE]->len)
        printf ("%s: in one boot, any seccomp filter costs these calls %+.1f%% (the kernel's own "
                "path); airlock's filter %+.1f%% on top of that\n", arch_name,
                (filter_ratio (ab, F_CONSTANT, F_NONE) - 1) * 100,
                (filter_ratio (ab, F_AIRLOCK, F_CONSTANT) - 1) * 100);
      if (boot.median > 0)
        printf ("%s: %u boot(s), %.1f s each (median, begin to trailer)\n", arch_name,
                ab->boot_s->len, boot.median);
    }
}

static void
add_summary_rows (ArchBench *benches, guint n)
{
  static const struct {
    Measurement m;
    const char *what;
    const char *floor_what;
    double target;
    gboolean target_is_value; /* the target bounds the time, in µs, not the ratio */
  } rows[] = {
    { M_SYSCALLS_SUPERVISED, "untraced system calls (getpid+stat+read)", "no seccomp filter",
      UNTRACED_TARGET, FALSE },
    { M_SYSCALLS_STRACE, "the same under strace -f -e trace=network", "no seccomp filter", 0, FALSE },
    { M_CONNECT_SUPERVISED, "each recorded connect", "no seccomp filter", CONNECT_TARGET_US, TRUE },
    { M_WRITE_SUPERVISED, "each write(2) to a file (fd > 2)", "no seccomp filter", WRITE_TARGET,
      FALSE },
    { M_SENDTO_SUPERVISED, "each recorded sendto", "no seccomp filter", 0, FALSE },
    { M_SENDTO_NOTIFIED, "each sendto without the recorder's hooks", "no seccomp filter", 0,
      FALSE },
  };

  for (guint i = 0; i < n; i++)
    {
      ArchBench *ab = &benches[i];

      if (ab->failure)
        continue;
      for (guint r = 0; r < G_N_ELEMENTS (rows); r++)
        {
          g_autofree char *what = g_strdup_printf ("%s, %s", rows[r].what,
                                                   airlock_arch_to_string (ab->arch));
          BenchSummaryRow row = {
            .bench = "supervisor",
            .what = what,
            .value = median_of (ab, rows[r].m) / 1000,
            .unit = "µs",
            .floor = median_of (ab, measurements[rows[r].m].floor) / 1000,
            .floor_what = rows[r].floor_what,
            .ratio = paired_ratio_of (ab, rows[r].m),
            .target = rows[r].target,
            .target_is_value = rows[r].target_is_value,
          };

          bench_summary_add (&row);
        }
      if (ab->filter[F_NONE]->len)
        {
          g_autofree char *any_what = g_strdup_printf (
              "untraced calls under any seccomp filter, %s (one boot)", airlock_arch_to_string (ab->arch));
          g_autofree char *ours_what = g_strdup_printf (
              "airlock's filter over a constant one, %s (one boot)", airlock_arch_to_string (ab->arch));
          BenchSummaryRow any = {
            .bench = "supervisor",
            .what = any_what,
            .value = stats_of_values (ab->filter[F_CONSTANT]).median / 1000,
            .unit = "µs",
            .floor = stats_of_values (ab->filter[F_NONE]).median / 1000,
            .floor_what = "no filter, same boot",
            .ratio = filter_ratio (ab, F_CONSTANT, F_NONE),
          };
          BenchSummaryRow ours = {
            .bench = "supervisor",
            .what = ours_what,
            .value = stats_of_values (ab->filter[F_AIRLOCK]).median / 1000,
            .unit = "µs",
            .floor = stats_of_values (ab->filter[F_CONSTANT]).median / 1000,
            .floor_what = "constant filter, same boot",
            .ratio = filter_ratio (ab, F_AIRLOCK, F_CONSTANT),
            .target = UNTRACED_TARGET,
          };

          bench_summary_add (&any);
          bench_summary_add (&ours);
        }
    }
}

/* ---- main --------------------------------------------------------------- */

int
main (int argc, char **argv)
{
  g_autofree char *arch_spec = NULL;
  g_autofree char *cache_dir = NULL;
  g_auto (BenchStageLog) stage_log = { "bench/supervisor", NULL };
  g_autoptr (GError) error = NULL;
  BenchOptions o = {
    .repeat = 3,
    .filter_rounds = 5,
  };
  ArchBench benches[AIRLOCK_N_ARCHES] = { 0 };
  AirlockArch arches[AIRLOCK_N_ARCHES];
  guint n = 0;
  int status = 0;
  GOptionEntry entries[] = {
    { "arch", 'a', 0, G_OPTION_ARG_STRING, &arch_spec, "amd64, arm64 or all (default: all)", "ARCH" },
    { "repeat", 'n', 0, G_OPTION_ARG_INT, &o.repeat,
      "boots per measurement, the median is reported (default: 3)", "N" },
    { "syscalls", 0, 0, G_OPTION_ARG_INT, &o.syscalls,
      "getpid+stat+read iterations (default: 1000000)", "N" },
    { "strace-syscalls", 0, 0, G_OPTION_ARG_INT, &o.strace_syscalls,
      "the same under strace (default: 20000)", "N" },
    { "connects", 0, 0, G_OPTION_ARG_INT, &o.connects,
      "connect() calls (default: 2000)", "N" },
    { "writes", 0, 0, G_OPTION_ARG_INT, &o.writes,
      "1-byte writes (default: 20000)", "N" },
    { "filter-syscalls", 0, 0, G_OPTION_ARG_INT, &o.filter_syscalls,
      "getpid+stat+read iterations per child of the in-boot filter measurement "
      "(default: a quarter of --syscalls)", "N" },
    { "filter-rounds", 0, 0, G_OPTION_ARG_INT, &o.filter_rounds,
      "rounds of the three filter variants per boot (default: 5)", "N" },
    { "wait-idle", 0, 0, G_OPTION_ARG_INT, &o.wait_idle_s,
      "before each run, wait up to S seconds for other QEMUs to end (default: 0)", "S" },
    { "cache-dir", 0, 0, G_OPTION_ARG_FILENAME, &cache_dir,
      "cache directory (default: $AIRLOCK_CACHE_DIR or ~/.cache/airlock)", "DIR" },
    { NULL },
  };

  g_set_prgname ("bench/supervisor");
  /* As `airlock` does: each run reaps its own QEMU (README, "teardown"). */
  (void) airlock_vm_adopt_qemu (NULL);
  if (!bench_parse_options ("bench/supervisor", "- what the in-guest supervisor costs, next to "
                            "floors without it", entries, &argc, &argv))
    return EXIT_USAGE;
  if (argc > 1 || o.repeat < 1 || o.filter_rounds < 1 || o.filter_rounds > 1000
      || o.wait_idle_s < 0 || o.syscalls < 0 || o.strace_syscalls < 0
      || o.connects < 0 || o.writes < 0 || o.filter_syscalls < 0 || o.syscalls > 100000000
      || o.strace_syscalls > 100000000 || o.connects > 100000000 || o.writes > 100000000
      || o.filter_syscalls > 100000000)
    {
      fprintf (stderr, "bench/supervisor: %s\n",
               argc > 1 ? "unexpected arguments"
                        : "--repeat and --filter-rounds (at most 1000) must be positive, "
                          "--wait-idle not negative, the iteration counts at most 100000000 "
                          "(0: the arch's default)");
      return EXIT_USAGE;
    }
  o.cache_dir = cache_dir;
  if (!bench_parse_arches ("bench/supervisor", arch_spec, arches, &n))
    return EXIT_USAGE;
  for (guint i = 0; i < n; i++)
    benches[i].arch = arches[i];

  {
    AirlockGuestImageOptions img_opts = {
      .cache_dir = cache_dir,
      .with_testroot = TRUE,
      .progress = bench_stage_progress,
      .progress_data = &stage_log,
    };

    for (guint i = 0; i < n && status == 0; i++)
      {
        ArchBench *ab = &benches[i];

        for (guint m = 0; m < N_MEASUREMENTS; m++)
          ab->samples[m] = g_array_new (FALSE, FALSE, sizeof (double));
        for (guint f = 0; f < N_FILTERS; f++)
          ab->filter[f] = g_array_new (FALSE, FALSE, sizeof (double));
        ab->boot_s = g_array_new (FALSE, FALSE, sizeof (double));
        ab->image = airlock_guest_image_ensure (ab->arch, &img_opts, &error);
        if (!ab->image)
          {
            fprintf (stderr, "bench/supervisor: %s\n", error->message);
            status = EXIT_RUN_FAILED;
          }
      }
  }
  for (guint i = 0; i < n && status == 0; i++)
    bench_arch (&benches[i], &o);

  if (status == 0)
    {
      print_table (benches, n, &o);
      add_summary_rows (benches, n);
      for (guint i = 0; i < n; i++)
        if (benches[i].failure)
          status = EXIT_RUN_FAILED;
    }
  for (guint i = 0; i < n; i++)
    arch_bench_clear (&benches[i]);
  return status;
}
