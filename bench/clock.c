/* bench/clock: what the warped clock (`--clock warp`, the default of run
 * and gate: QEMU -icount shift=2,sleep=off, the heartbeats paced by the
 * host) costs and what it buys, per arch, against the real clock measured
 * in the same run (issue 20, "Time that runs ahead").
 *
 * Each round, per arch, in alternating order (warp first on even rounds):
 *
 *   gate      the release gate of the `clean` sample through the case API
 *             (controls, the image, stdin "quit\n", the verdict, no bundle),
 *             under each clock: the whole gate's wall time, start to result
 *             ("boot" = start to the first record, the controls' start)
 *   cpu       bench-cpu ROUNDS (tests/guest/bench.c: a million xorshift
 *             steps a round, no system call) from the testroot, under each
 *             clock: the workload's wall time, as the host received its
 *             start and exit (the guest's own clock counts instructions
 *             under warp, so it cannot time itself)
 *   sleep     time-bomb (an hour's sleep of guest time, then a datagram and
 *             a connect) under the warped clock only: the wall time that
 *             hour took (the real clock would take the hour)
 *   horizon   time-bomb 86400 under the warped clock: the run ends at its
 *             guest-time limit (--guest-time, six hours by default): the
 *             wall time the whole default horizon takes
 *
 * The floor of gate and cpu is the same run on the real clock; the ratio is
 * the median of each round's warp/real.  A benchmark, not a test: the exit
 * status is 1 only when a run fails outright or a result is not what the
 * run must give (the clean gate not a pass, the bomb not seen, the horizon
 * not reached). */
#include "config.h"

#include "airlock.h"
#include "bench-common.h"
#include "case/case-state-private.h"
#include "gate/verdict.h"
#include "stats.h"
#include "summary.h"

#include <stdio.h>
#include <string.h>

#define EXIT_RUN_FAILED 1
#define EXIT_USAGE 2

#define CPU_ROUNDS_DEFAULT 1500
#define SLEEP_S 3600

typedef struct {
  double gate_real, gate_warp;        /* the whole gate, s */
  double boot_real, boot_warp;        /* start to the first record, s */
  double cpu_real, cpu_warp;          /* the CPU loop's workload, wall s */
  double cpu_guest_warp;              /* the same in guest s, warped */
  double sleep_warp;                  /* an hour of guest time, wall s */
  double horizon_warp;                /* the default guest-time limit, wall s */
  double horizon_guest;               /* what it covered, guest s */
  double gate_ratio, cpu_ratio;       /* warp / real of this round */
} ClockSample;

typedef struct {
  AirlockArch arch;
  AirlockSession *sessions[2];        /* [0] real, [1] warp */
  GArray *samples;                    /* ClockSample */
  char *failure;
} ArchClock;

typedef struct {
  int repeat;
  int cpu_rounds;
  const char *reference;
  const char *cache_dir;
  char *load_before;
} BenchOptions;

static void
on_progress (const char *stage, guint64 done, guint64 total, gpointer user_data)
{
  if (done == 0)
    fprintf (stderr, "bench/clock: %s\n", stage);
}

/* The monotonic time of the run's first record (the controls' start). */
static void
on_event (const AirlockEvent *event, const AirlockEvent *call, gpointer user_data)
{
  gint64 *first = user_data;

  if (!*first)
    *first = g_get_monotonic_time ();
}

/* One case on @session: its result, and the wall seconds to it and to its
 * first record.  NULL with the reason in *ret_failure. */
static AirlockResult *
run_case (AirlockSession *session, AirlockCase *c, double *ret_total, double *ret_boot,
          char **ret_failure)
{
  g_autoptr (GError) error = NULL;
  gint64 first = 0, start = g_get_monotonic_time ();
  AirlockResult *result;

  airlock_case_set_event_func (c, on_event, &first);
  result = airlock_session_run (session, c, &error);
  *ret_total = secs (start, g_get_monotonic_time ());
  *ret_boot = secs (start, first);
  if (!result)
    *ret_failure = g_strdup (error->message);
  else if (!airlock_result_is_complete (result))
    {
      *ret_failure = g_strdup_printf ("the run is not complete: %s",
                                      airlock_result_get_incomplete_reason (result));
      g_clear_pointer (&result, airlock_result_free);
    }
  return result;
}

static AirlockCase *
clean_case (const BenchOptions *o)
{
  g_autoptr (GBytes) quit = g_bytes_new_static ("quit\n", 5);
  AirlockCase *c = airlock_case_new (o->reference);

  airlock_case_set_stdin_bytes (c, quit);
  return c;
}

static AirlockCase *
program_case (const char *program, const char *arg)
{
  const char *args[] = { arg, NULL };
  AirlockCase *c = airlock_case_new (NULL);

  airlock_case_set_guest_program (c, program);
  airlock_case_set_args (c, args);
  airlock_case_set_controls (c, FALSE);
  return c;
}

static double
observed_wall (AirlockResult *r)
{
  gint64 ms = airlock_result_get_observed_wall_ms (r);

  return ms < 0 ? -1 : (double) ms / 1000.0;
}

static double
observed_guest (AirlockResult *r)
{
  gint64 ms = airlock_result_get_observed_guest_ms (r);

  return ms < 0 ? -1 : (double) ms / 1000.0;
}

static gboolean
has_attempt_to (AirlockResult *r, const char *address, guint16 port)
{
  GPtrArray *attempts = airlock_result_get_attempts (r);

  for (guint i = 0; i < attempts->len; i++)
    {
      const AirlockAttempt *a = attempts->pdata[i];

      if (g_strcmp0 (a->address, address) == 0 && a->port == port)
        return TRUE;
    }
  return FALSE;
}

/* One round of one arch; FALSE with ac->failure set. */
static gboolean
bench_round (ArchClock *ac, const BenchOptions *o, int round)
{
  ClockSample s = { 0 };
  g_autofree char *cpu_arg = g_strdup_printf ("%d", o->cpu_rounds);

  for (int k = 0; k < 2; k++)
    {
      gboolean warp = (k + round) % 2 == 0;
      AirlockSession *session = ac->sessions[warp];
      g_autoptr (AirlockCase) gate = clean_case (o);
      g_autoptr (AirlockCase) cpu = program_case ("bench-cpu", cpu_arg);
      g_autoptr (AirlockResult) r = NULL;
      double total, boot;

      r = run_case (session, gate, &total, &boot, &ac->failure);
      if (!r)
        return FALSE;
      if (airlock_result_get_verdict (r) != AIRLOCK_VERDICT_PASS)
        {
          ac->failure = g_strdup_printf ("the clean gate under the %s clock is %s, not a pass",
                                         warp ? "warped" : "real",
                                         airlock_verdict_kind_to_string (airlock_result_get_verdict (r)));
          return FALSE;
        }
      *(warp ? &s.gate_warp : &s.gate_real) = total;
      *(warp ? &s.boot_warp : &s.boot_real) = boot;
      g_clear_pointer (&r, airlock_result_free);

      r = run_case (session, cpu, &total, &boot, &ac->failure);
      if (!r)
        return FALSE;
      *(warp ? &s.cpu_warp : &s.cpu_real) = observed_wall (r);
      if (warp)
        s.cpu_guest_warp = observed_guest (r);
    }

  {
    g_autoptr (AirlockCase) bomb = program_case ("time-bomb", NULL);
    g_autoptr (AirlockCase) horizon = program_case ("time-bomb", "86400");
    g_autoptr (AirlockResult) r = NULL;
    double total, boot;

    /* 60 s of wall time: room for a loaded machine, and not a limit the
     * bomb's hour must fit under here. */
    airlock_case_set_timeout (bomb, 60);
    r = run_case (ac->sessions[1], bomb, &total, &boot, &ac->failure);
    if (!r)
      return FALSE;
    if (!has_attempt_to (r, "192.0.2.1", 80))
      {
        ac->failure = g_strdup ("the time bomb's connect was not seen under the warped clock");
        return FALSE;
      }
    s.sleep_warp = observed_wall (r);
    g_clear_pointer (&r, airlock_result_free);

    airlock_case_set_timeout (horizon, 300);
    r = run_case (ac->sessions[1], horizon, &total, &boot, &ac->failure);
    if (!r)
      return FALSE;
    if (!airlock_result_get_verdict_details (r)->ended_by_time_limit
        || observed_guest (r) < 6 * 3600)
      {
        ac->failure = g_strdup_printf ("the six hours' horizon was not reached: %.0f s of guest "
                                       "time in %.1f s", observed_guest (r), observed_wall (r));
        return FALSE;
      }
    s.horizon_warp = observed_wall (r);
    s.horizon_guest = observed_guest (r);
  }

  s.gate_ratio = s.gate_real > 0 ? s.gate_warp / s.gate_real : -1;
  s.cpu_ratio = s.cpu_real > 0 && s.cpu_warp > 0 ? s.cpu_warp / s.cpu_real : -1;
  g_array_append_val (ac->samples, s);
  fprintf (stderr, "bench/clock: %s round %d: gate %.2f s real, %.2f s warp; cpu %.2f s real, "
           "%.2f s warp; an hour's sleep %.2f s; %.0f s of guest time in %.2f s\n",
           airlock_arch_to_string (ac->arch), round + 1, s.gate_real, s.gate_warp, s.cpu_real,
           s.cpu_warp, s.sleep_warp, s.horizon_guest, s.horizon_warp);
  return TRUE;
}

#define COL(field) G_STRUCT_OFFSET (ClockSample, field)

static void
print_row (const char *what, GArray *samples, gsize real, gsize warp, gsize ratio)
{
  Stats r = stats_of (samples, real), w = stats_of (samples, warp), q = stats_of (samples, ratio);

  printf ("  %-34s %8.2fs %8.2fs %7.2fx   (real %.2f-%.2f s, warp %.2f-%.2f s)\n", what, r.median,
          w.median, q.median, r.min, r.max, w.min, w.max);
}

static void
print_table (ArchClock *acs, guint n, const BenchOptions *o)
{
  g_autofree char *load_after = bench_load_average ();

  printf ("the guest's clock under TCG: warp (-icount shift=2,sleep=off, heartbeats paced by the "
          "host) against real, same run; median of %d round(s), alternating order; load average "
          "before: %s, after: %s\n", o->repeat, o->load_before, load_after);
  for (guint i = 0; i < n; i++)
    {
      ArchClock *ac = &acs[i];
      Stats sleep = stats_of (ac->samples, COL (sleep_warp));
      Stats horizon = stats_of (ac->samples, COL (horizon_warp));
      Stats cpu_guest = stats_of (ac->samples, COL (cpu_guest_warp));
      Stats cpu_warp = stats_of (ac->samples, COL (cpu_warp));

      printf ("\n%s %36s %9s %9s %8s\n", airlock_arch_to_string (ac->arch), "", "real", "warp",
              "warp/real");
      print_row ("the clean gate (whole)", ac->samples, COL (gate_real), COL (gate_warp),
                 COL (gate_ratio));
      {
        Stats r = stats_of (ac->samples, COL (boot_real)), w = stats_of (ac->samples, COL (boot_warp));

        printf ("  %-34s %8.2fs %8.2fs %7.2fx\n", "  of it: start to the first record", r.median,
                w.median, r.median > 0 ? w.median / r.median : -1);
      }
      {
        g_autofree char *what = g_strdup_printf ("bench-cpu %d (workload, wall)", o->cpu_rounds);

        print_row (what, ac->samples, COL (cpu_real), COL (cpu_warp), COL (cpu_ratio));
      }
      printf ("  %-34s %8s %8.2fs            (%.2f s of guest time a wall second while busy)\n",
              "an hour's sleep, then the connect", "3600 s", sleep.median,
              cpu_warp.median > 0 ? cpu_guest.median / cpu_warp.median : -1);
      printf ("  %-34s %8s %8.2fs            (%.0f s of guest time a wall second while idle)\n",
              "the six hours' guest-time limit", "21600 s", horizon.median,
              horizon.median > 0 ? 21600 / horizon.median : -1);
    }
  printf ("\ngate: the whole gate of the clean sample (controls, the image, verdict), start to "
          "result; cpu: bench-cpu's workload from its start to its exit as the host received them; "
          "warp/real: the median of each round's ratio.  Sleep and limit: under the real clock they "
          "take the hour and the six hours.\n");
}

static void
add_summary_rows (ArchClock *acs, guint n, const BenchOptions *o)
{
  for (guint i = 0; i < n; i++)
    {
      ArchClock *ac = &acs[i];
      const char *arch = airlock_arch_to_string (ac->arch);
      g_autofree char *gate_what = g_strdup_printf ("the clean gate, --clock warp, %s", arch);
      g_autofree char *cpu_what = g_strdup_printf ("bench-cpu %d, --clock warp, %s", o->cpu_rounds,
                                                   arch);
      g_autofree char *sleep_what = g_strdup_printf ("an hour's sleep then a connect, warp, %s", arch);
      g_autofree char *horizon_what = g_strdup_printf ("6 h of guest time (the limit), warp, %s", arch);
      BenchSummaryRow gate = {
        .bench = "clock", .what = gate_what, .unit = "s",
        .value = stats_of (ac->samples, COL (gate_warp)).median,
        .floor = stats_of (ac->samples, COL (gate_real)).median,
        .ratio = stats_of (ac->samples, COL (gate_ratio)).median,
        .floor_what = "--clock real",
      };
      BenchSummaryRow cpu = {
        .bench = "clock", .what = cpu_what, .unit = "s",
        .value = stats_of (ac->samples, COL (cpu_warp)).median,
        .floor = stats_of (ac->samples, COL (cpu_real)).median,
        .ratio = stats_of (ac->samples, COL (cpu_ratio)).median,
        .floor_what = "--clock real",
      };
      BenchSummaryRow sleep = {
        .bench = "clock", .what = sleep_what, .unit = "s",
        .value = stats_of (ac->samples, COL (sleep_warp)).median,
        .floor = -1,
      };
      BenchSummaryRow horizon = {
        .bench = "clock", .what = horizon_what, .unit = "s",
        .value = stats_of (ac->samples, COL (horizon_warp)).median,
        .floor = -1,
      };

      bench_summary_add (&gate);
      bench_summary_add (&cpu);
      bench_summary_add (&sleep);
      bench_summary_add (&horizon);
    }
}

int
main (int argc, char **argv)
{
  g_autofree char *arch_spec = NULL;
  g_autofree char *cache_dir = NULL;
  g_autofree char *reference = NULL;
  g_autoptr (GError) error = NULL;
  BenchOptions o = { .repeat = 3, .cpu_rounds = CPU_ROUNDS_DEFAULT };
  ArchClock acs[AIRLOCK_N_ARCHES] = { 0 };
  AirlockArch arches[AIRLOCK_N_ARCHES];
  guint n = 0;
  int status = 0;
  GOptionEntry entries[] = {
    { "arch", 'a', 0, G_OPTION_ARG_STRING, &arch_spec, "amd64, arm64 or all (default: all)", "ARCH" },
    { "repeat", 'n', 0, G_OPTION_ARG_INT, &o.repeat, "measured rounds (default: 3)", "N" },
    { "cpu-rounds", 0, 0, G_OPTION_ARG_INT, &o.cpu_rounds,
      "bench-cpu's rounds of a million steps (default: 1500)", "N" },
    { "image", 'i', 0, G_OPTION_ARG_STRING, &reference,
      "the image to gate (default: oci:$AIRLOCK_SAMPLE_DIR/clean)", "REF" },
    { "cache-dir", 0, 0, G_OPTION_ARG_FILENAME, &cache_dir,
      "cache directory (default: $AIRLOCK_CACHE_DIR or ~/.cache/airlock)", "DIR" },
    { NULL },
  };

  g_set_prgname ("bench/clock");
  (void) airlock_vm_adopt_qemu (NULL);
  if (!bench_parse_options ("bench/clock", "- the warped clock's cost and reach, against the "
                            "real clock", entries, &argc, &argv))
    return EXIT_USAGE;
  if (argc > 1 || o.repeat < 1 || o.cpu_rounds < 1)
    {
      fprintf (stderr, "bench/clock: %s\n", argc > 1 ? "unexpected arguments"
                                                     : "--repeat and --cpu-rounds must be at least 1");
      return EXIT_USAGE;
    }
  if (!bench_parse_arches ("bench/clock", arch_spec, arches, &n))
    return EXIT_USAGE;
  for (guint i = 0; i < n; i++)
    acs[i].arch = arches[i];
  if (!reference && !(reference = bench_clean_sample_reference ("bench/clock")))
    return EXIT_USAGE;
  o.reference = reference;
  o.cache_dir = cache_dir;

  for (guint i = 0; i < n && status == 0; i++)
    for (int warp = 0; warp < 2 && status == 0; warp++)
      {
        AirlockSessionOptions so = {
          .cache_dir = cache_dir,
          /* TCG on both: the real clock's floor must not get KVM. */
          .accel = AIRLOCK_ACCEL_TCG,
          .clock = warp ? AIRLOCK_CLOCK_WARP : AIRLOCK_CLOCK_REAL,
          .progress = on_progress,
        };

        acs[i].samples = acs[i].samples ? acs[i].samples
                                        : g_array_new (FALSE, FALSE, sizeof (ClockSample));
        acs[i].sessions[warp] = airlock_session_new (acs[i].arch, &so, &error);
        if (!acs[i].sessions[warp])
          {
            fprintf (stderr, "bench/clock: %s: %s\n", airlock_arch_to_string (acs[i].arch),
                     error->message);
            status = EXIT_RUN_FAILED;
          }
      }

  o.load_before = bench_load_average ();
  for (int round = 0; round < o.repeat && status == 0; round++)
    for (guint i = 0; i < n && status == 0; i++)
      if (!bench_round (&acs[i], &o, round))
        {
          fprintf (stderr, "bench/clock: %s: %s\n", airlock_arch_to_string (acs[i].arch),
                   acs[i].failure);
          status = EXIT_RUN_FAILED;
        }
  if (status == 0)
    {
      print_table (acs, n, &o);
      add_summary_rows (acs, n, &o);
    }
  g_free (o.load_before);
  for (guint i = 0; i < n; i++)
    {
      airlock_session_free (acs[i].sessions[0]);
      airlock_session_free (acs[i].sessions[1]);
      if (acs[i].samples)
        g_array_unref (acs[i].samples);
      g_free (acs[i].failure);
    }
  return status;
}
