/* bench/gate: the release gate (`airlock gate`) on the `clean` sample image,
 * both arches, wall time per phase, next to the bare-QEMU boot floor of
 * each arch measured in the same run (issue 5, "Benchmark").
 *
 * One gate of one arch is what harness/cmd-run.c's run_image and gate_judge
 * do, through the library: resolve the image for the arch, its rootfs disk
 * and the guest image (both cached after the setup here), one boot with
 * the negative controls and then the image's entrypoint (stdin "quit\n":
 * the clean server answers and exits), then the capture's analysis and the
 * verdict under the default policy (no egress).  Its phases:
 *
 *   prepare   image resolved, disk and guest image found in the cache,
 *             airlock_vm_new () (connection, sweep)
 *   boot      domain creation to the guest's hello (AirlockVmTimings:
 *             hello - begin, bench/boot's "ready"): what the floor is for
 *   controls  the negative-control probe, WORKLOAD_START to WORKLOAD_EXIT of
 *             phase CONTROLS, on the guest's clock
 *   workload  the same for phase WORKLOAD: the image's entrypoint
 *   teardown  trailer to the domain gone
 *   analysis  airlock_vm_get_record () (the capture analysed) + airlock_verdict_compute (), host
 *   bundle    the evidence bundle: not in this per-phase table (its runs
 *             are assembled here, without one); the command's own timing
 *             below writes the bundles
 *   other     total minus the above: the supervisor's setup between hello
 *             and the controls, between the phases, to the trailer
 *   total     the arch's whole gate, image resolution to verdict
 *
 * The floor is bench/boot's (floor.c): the same kernel under bare
 * qemu-system-* with an init that prints a marker and powers off.  Each
 * round runs both floors and the gate of each arch one after the other
 * (floors first on even rounds, last on odd ones); the gates' wall time
 * for both arches together is the "warm caches" total.  Medians
 * over --repeat rounds.  TCG explicitly, as the floor is.  A benchmark, not
 * a test: the exit status is 1 only when a run fails outright or the clean
 * image does not pass the gate (the reasons are printed).
 *
 * With $AIRLOCK_CLI (meson sets it), each round also times the command as a
 * pipeline runs it: `airlock gate --image REF --out DIR` for both arches
 * at once (its default) and with --sequential, in alternating order,
 * bundles included. */
#include "config.h"

#include "airlock.h"
#include "bench-common.h"
#include "evidence/event.h"
#include "floor.h"
#include "fsutil-private.h"
#include "stats.h"
#include "summary.h"
#include "gate/verdict.h"
#include "net/flows.h"
#include "vm/vm-private.h"
#include "protocol.h"

#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

#define EXIT_RUN_FAILED 1
#define EXIT_USAGE 2

/* harness/cmd-run.c's run_image. */
#define IMAGE_ROOT "/airlock/image"
#define IMAGE_DISK_SERIAL "airlock-root"
#define DEFAULT_PATH "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define WORKLOAD_TIMEOUT_MS (30 * 1000)   /* `airlock gate`'s default --timeout */
#define WORKLOAD_STDIN "quit\n"
/* The target for both arches' gates one after the other. */
#define TARGET_BOTH_S 15.0
/* Issue 8: boot-to-ready within 1.2x of the floor (bench/boot's target). */
#define BOOT_TARGET_RATIO 1.2

typedef struct {
  double prepare;
  double boot;
  double define;    /* of boot: the domain created (libvirt, QEMU started, paused) */
  double controls;
  double workload;
  double teardown;
  double analysis;
  double other;
  double total;
} GateSample;

typedef struct {
  AirlockArch arch;
  AirlockGuestImage *image;
  char *qemu;
  char *qemu_version;
  char *floor_initrd;
  char *manifest_digest;
  GArray *floor;       /* FloorSample, measured rounds only */
  GArray *gate;        /* GateSample, measured rounds only */
  char *failure;       /* the first failure, which ends the rounds */
} ArchGate;

typedef struct {
  int repeat;
  int warmup;
  const char *reference;
  const char *cache_dir;
  const char *cli;            /* $AIRLOCK_CLI: the command, for its own timing */
  const char *tmp_dir;
  AirlockImageSource *source;
  AirlockPolicy *policy;
  /* The caches' options, shared by the setup and every gate. */
  const AirlockImageDiskOptions *disk_opts;
  const AirlockGuestImageOptions *img_opts;
  char *load_before;
} BenchOptions;

static void
arch_gate_clear (ArchGate *ag)
{
  g_clear_pointer (&ag->image, airlock_guest_image_free);
  g_clear_pointer (&ag->qemu, g_free);
  g_clear_pointer (&ag->qemu_version, g_free);
  if (ag->floor_initrd)
    (void) g_unlink (ag->floor_initrd);
  g_clear_pointer (&ag->floor_initrd, g_free);
  g_clear_pointer (&ag->manifest_digest, g_free);
  g_clear_pointer (&ag->floor, g_array_unref);
  g_clear_pointer (&ag->gate, g_array_unref);
  g_clear_pointer (&ag->failure, g_free);
}

/* One log of stages for every build the benchmark starts, as long as it
 * runs: a stage shared by both arches' builds is printed once in a row. */
static BenchStageLog stage_log = { "bench/gate", NULL };

/* ---- one gate ------------------------------------------------------------ */

/* Guest seconds from the WORKLOAD_START to the WORKLOAD_EXIT of @phase, or
 * -1 when the log lacks either. */
static double
phase_secs (GPtrArray *events, guint32 phase)
{
  guint64 start = 0, end = 0;
  gboolean have_start = FALSE, have_end = FALSE;

  for (guint i = 0; events && i < events->len; i++)
    {
      const AirlockEvent *ev = events->pdata[i];

      if (ev->phase != phase)
        continue;
      if (ev->kind == AIRLOCK_EVENT_WORKLOAD_START && !have_start)
        {
          start = ev->time_ns;
          have_start = TRUE;
        }
      else if (ev->kind == AIRLOCK_EVENT_WORKLOAD_EXIT && !have_end)
        {
          end = ev->time_ns;
          have_end = TRUE;
        }
    }
  return have_start && have_end && end >= start ? (end - start) / 1e9 : -1;
}

/* Runs the gate of one arch, as `airlock gate` does.  Returns FALSE with
 * @error set when it cannot run, the run is not complete, or the verdict is
 * not pass (the clean image must pass). */
static gboolean
run_gate (ArchGate *ag, const BenchOptions *o, GateSample *ret, GError **error)
{
  const char *arch_name = airlock_arch_to_string (ag->arch);
  g_autoptr (AirlockImage) image = NULL;
  g_autoptr (AirlockGuestImage) guest = NULL;
  g_autoptr (AirlockVm) vm = NULL;
  g_autoptr (AirlockVerdict) verdict = NULL;
  g_autoptr (GPtrArray) envp = g_ptr_array_new ();
  g_autoptr (GBytes) stdin_data = g_bytes_new_static (WORKLOAD_STDIN, strlen (WORKLOAD_STDIN));
  g_autofree char *disk = NULL;
  g_auto (GStrv) argv = NULL;
  AirlockEventLog *log;
  GPtrArray *events;
  const AirlockVmTimings *t;
  gboolean have_path = FALSE;
  gint64 begin, prepared, judged_from, judged;
  AirlockRunSpec spec = {
    .root = IMAGE_ROOT,
    .root_disk = IMAGE_DISK_SERIAL,
    .timeout_ms = WORKLOAD_TIMEOUT_MS,
    .hostname = "airlock",
    .stdio = TRUE,
    .controls = TRUE,
  };
  AirlockVmOptions vm_opts = {
    .cache_dir = o->cache_dir,
    .accel = AIRLOCK_ACCEL_TCG,
    .memory_mib = BENCH_FLOOR_MEMORY_MIB,
    .spec = &spec,
    .stdin_data = stdin_data,
  };

  begin = g_get_monotonic_time ();
  image = airlock_image_resolve (o->source, ag->arch, error);
  if (!image)
    return FALSE;
  argv = airlock_image_command (image, NULL, error);
  if (!argv)
    return FALSE;
  disk = airlock_image_disk_ensure (o->source, image, o->disk_opts, error);
  if (!disk)
    return FALSE;
  guest = airlock_guest_image_ensure (ag->arch, o->img_opts, error);
  if (!guest)
    return FALSE;
  for (guint i = 0; image->env && image->env[i]; i++)
    {
      have_path = have_path || g_str_has_prefix (image->env[i], "PATH=");
      g_ptr_array_add (envp, image->env[i]);
    }
  if (!have_path)
    g_ptr_array_add (envp, (gpointer) DEFAULT_PATH);
  g_ptr_array_add (envp, NULL);
  spec.argv = (const char *const *) argv;
  spec.envp = (const char *const *) envp->pdata;
  spec.cwd = image->working_dir && *image->working_dir ? image->working_dir : NULL;
  spec.user = image->user && *image->user ? image->user : NULL;
  vm_opts.root_disk_path = disk;
  vm = airlock_vm_new (ag->arch, guest, &vm_opts, error);
  if (!vm)
    return FALSE;
  prepared = g_get_monotonic_time ();
  for (guint i = 0; i < airlock_vm_get_swept (vm)->len; i++)
    fprintf (stderr, "bench/gate: removed domain '%s' left behind by a crashed run\n",
             (const char *) airlock_vm_get_swept (vm)->pdata[i]);
  if (!airlock_vm_run (vm, error))
    return FALSE;

  judged_from = g_get_monotonic_time ();
  {
    g_autoptr (AirlockRunRecord) record = airlock_vm_get_record (vm);

    verdict = airlock_verdict_compute (record, o->policy);
  }
  judged = g_get_monotonic_time ();

  if (!airlock_vm_is_complete (vm))
    {
      g_autoptr (GBytes) console = airlock_vm_get_console (vm);
      gsize len;
      const guint8 *data = g_bytes_get_data (console, &len);

      bench_print_tail ("console", data, len);
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_FAILED, "the %s run is not complete: %s",
                   arch_name, airlock_vm_get_reason (vm));
      return FALSE;
    }
  if (verdict->kind != AIRLOCK_VERDICT_PASS)
    {
      g_autoptr (GString) why = g_string_new (NULL);

      for (guint i = 0; i < verdict->reasons->len; i++)
        g_string_append_printf (why, "%s%s", i ? "; " : "", (const char *) verdict->reasons->pdata[i]);
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_FAILED, "the %s verdict on %s is %s: %s",
                   arch_name, o->reference, airlock_verdict_kind_to_string (verdict->kind), why->str);
      return FALSE;
    }
  if (!ag->manifest_digest)
    ag->manifest_digest = g_strdup (image->manifest_digest);

  t = airlock_vm_get_timings (vm);
  log = airlock_vm_get_events (vm);
  events = log ? airlock_event_log_get_events (log) : NULL;
  ret->prepare = secs (begin, prepared);
  ret->boot = secs (t->begin, t->hello);
  ret->define = secs (t->begin, t->created);
  ret->controls = phase_secs (events, AIRLOCK_PHASE_CONTROLS);
  ret->workload = phase_secs (events, AIRLOCK_PHASE_WORKLOAD);
  ret->teardown = secs (t->trailer, t->stopped);
  ret->analysis = secs (judged_from, judged);
  ret->total = secs (begin, judged);
  ret->other = ret->total - MAX (ret->prepare, 0) - MAX (ret->boot, 0) - MAX (ret->controls, 0)
               - MAX (ret->workload, 0) - MAX (ret->teardown, 0) - MAX (ret->analysis, 0);
  return TRUE;
}

/* ---- rounds -------------------------------------------------------------- */

static void
run_floor (ArchGate *ag, FloorSample *fs, GError **error)
{
  BenchFloor f = {
    .arch = ag->arch,
    .qemu = ag->qemu,
    .kernel_path = ag->image->kernel_path,
    .initrd = ag->floor_initrd,
  };

  (void) bench_floor_run (&f, fs, error);
}

/* ---- the command ---------------------------------------------------------- */

/* `airlock gate --image REF --out DIR` of both arches as a pipeline runs
 * it, evidence bundles included: at once (the default) or --sequential.
 * Wall seconds, or -1 with @error when it did not pass. */
static double
run_cli (const BenchOptions *o, gboolean sequential, int round, GError **error)
{
  g_autofree char *out = g_strdup_printf ("%s/cli-%d-%s", o->tmp_dir, round,
                                          sequential ? "sequential" : "at-once");
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_autofree char *output = NULL;
  gint64 from;
  int wait_status;
  double s;

  g_ptr_array_add (argv, (gpointer) o->cli);
  g_ptr_array_add (argv, (gpointer) "gate");
  g_ptr_array_add (argv, (gpointer) "--image");
  g_ptr_array_add (argv, (gpointer) o->reference);
  g_ptr_array_add (argv, (gpointer) "--accel");
  g_ptr_array_add (argv, (gpointer) "tcg");
  g_ptr_array_add (argv, (gpointer) "--out");
  g_ptr_array_add (argv, out);
  if (o->cache_dir)
    {
      g_ptr_array_add (argv, (gpointer) "--cache-dir");
      g_ptr_array_add (argv, (gpointer) o->cache_dir);
    }
  if (sequential)
    g_ptr_array_add (argv, (gpointer) "--sequential");
  g_ptr_array_add (argv, NULL);
  from = g_get_monotonic_time ();
  if (!g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                     NULL, &output, &wait_status, error))
    return -1;
  s = secs (from, g_get_monotonic_time ());
  airlock_rm_rf (out);
  if (!g_spawn_check_wait_status (wait_status, NULL))
    {
      g_set_error (error, G_SPAWN_ERROR, G_SPAWN_ERROR_FAILED, "'%s gate%s' did not pass (wait "
                   "status 0x%x): %s", o->cli, sequential ? " --sequential" : "", wait_status,
                   output ? output : "");
      return -1;
    }
  return s;
}

/* Returns FALSE when an arch failed (its failure set). */
static gboolean
bench_rounds (ArchGate *ags, guint n, const BenchOptions *o, GArray *both, GArray *cli_seq,
              GArray *cli_par)
{
  int total = o->warmup + o->repeat;

  for (int round = 0; round < total; round++)
    {
      gboolean warm = round < o->warmup;
      g_autofree char *label = warm ? g_strdup_printf ("warm-up %d/%d", round + 1, o->warmup)
                                    : g_strdup_printf ("round %d/%d", round - o->warmup + 1, o->repeat);
      FloorSample fs[AIRLOCK_N_ARCHES];
      GateSample gs[AIRLOCK_N_ARCHES];
      double both_s = -1;

      for (int half = 0; half < 2; half++)
        {
          gboolean floor_turn = (half == 0) == (round % 2 == 0);

          if (floor_turn)
            for (guint i = 0; i < n; i++)
              {
                g_autoptr (GError) error = NULL;

                fs[i] = (FloorSample) { -1, -1 };
                run_floor (&ags[i], &fs[i], &error);
                if (error)
                  {
                    ags[i].failure = g_strdup_printf ("floor: %s", error->message);
                    fprintf (stderr, "bench/gate: %s %s: floor failed: %s\n",
                             airlock_arch_to_string (ags[i].arch), label, error->message);
                    return FALSE;
                  }
              }
          else
            {
              gint64 from = g_get_monotonic_time ();

              for (guint i = 0; i < n; i++)
                {
                  g_autoptr (GError) error = NULL;

                  gs[i] = (GateSample) { -1, -1, -1, -1, -1, -1, -1, -1, -1 };
                  if (!run_gate (&ags[i], o, &gs[i], &error))
                    {
                      ags[i].failure = g_strdup (error->message);
                      fprintf (stderr, "bench/gate: %s %s: failed: %s\n",
                               airlock_arch_to_string (ags[i].arch), label, error->message);
                      return FALSE;
                    }
                }
              both_s = secs (from, g_get_monotonic_time ());
            }
        }
      for (guint i = 0; i < n; i++)
        fprintf (stderr, "bench/gate: %s %s: pass; total %.2fs, boot %.2fs (floor %.2fs, %.2fx), "
                 "controls %.2fs, workload %.2fs, teardown %.2fs, analysis %.2fms\n",
                 airlock_arch_to_string (ags[i].arch), label, gs[i].total, gs[i].boot, fs[i].ready,
                 gs[i].boot / fs[i].ready, gs[i].controls, gs[i].workload, gs[i].teardown,
                 gs[i].analysis * 1000);
      fprintf (stderr, "bench/gate: %s: the gate%s one after the other: %.2fs\n", label,
               n > 1 ? "s of both arches" : "", both_s);
      /* The command itself, both arches, bundles written: at once and one
       * after the other, in alternating order. */
      if (n > 1 && o->cli)
        {
          double cs[2] = { -1, -1 };

          for (int k = 0; k < 2; k++)
            {
              gboolean sequential = (k == 0) == (round % 2 == 0);
              g_autoptr (GError) error = NULL;

              cs[sequential] = run_cli (o, sequential, round, &error);
              if (cs[sequential] < 0)
                {
                  ags[0].failure = g_strdup (error->message);
                  fprintf (stderr, "bench/gate: %s: %s\n", label, error->message);
                  return FALSE;
                }
            }
          fprintf (stderr, "bench/gate: %s: airlock gate, both arches at once %.2fs, "
                   "--sequential %.2fs\n", label, cs[0], cs[1]);
          if (!warm)
            {
              g_array_append_val (cli_par, cs[0]);
              g_array_append_val (cli_seq, cs[1]);
            }
        }
      if (warm)
        continue;
      for (guint i = 0; i < n; i++)
        {
          g_array_append_val (ags[i].floor, fs[i]);
          g_array_append_val (ags[i].gate, gs[i]);
        }
      g_array_append_val (both, both_s);
    }
  return TRUE;
}

/* ---- output -------------------------------------------------------------- */

/* A column with no measurement yet (the evidence bundle). */
#define NOT_MEASURED G_MAXSIZE

static void
print_table (ArchGate *ags, guint n, const BenchOptions *o, GArray *both, GArray *cli_seq,
             GArray *cli_par)
{
  static const struct {
    const char *name;
    gsize offset;
  } columns[] = {
    { "prepare", G_STRUCT_OFFSET (GateSample, prepare) },
    { "boot", G_STRUCT_OFFSET (GateSample, boot) },
    { "(define)", G_STRUCT_OFFSET (GateSample, define) },
    { "controls", G_STRUCT_OFFSET (GateSample, controls) },
    { "workload", G_STRUCT_OFFSET (GateSample, workload) },
    { "teardown", G_STRUCT_OFFSET (GateSample, teardown) },
    { "analysis", G_STRUCT_OFFSET (GateSample, analysis) },
    { "bundle", NOT_MEASURED },
    { "other", G_STRUCT_OFFSET (GateSample, other) },
    { "total", G_STRUCT_OFFSET (GateSample, total) },
  };
  g_autofree char *load_after = bench_load_average ();
  Stats b = stats_of (both, 0);

  printf ("airlock gate on %s under TCG, %d MiB, 1 vCPU, default policy; median of %d round(s) "
          "after %d warm-up(s), caches warm; load average before: %s, after: %s\n",
          o->reference, BENCH_FLOOR_MEMORY_MIB, o->repeat, o->warmup, o->load_before, load_after);
  for (guint i = 0; i < n; i++)
    printf ("  %s: %s; kernel %s; manifest %s\n", airlock_arch_to_string (ags[i].arch),
            ags[i].qemu_version, ags[i].image->kernel_path,
            ags[i].manifest_digest ? ags[i].manifest_digest : "-");

  printf ("\n%-6s", "median");
  for (guint c = 0; c < G_N_ELEMENTS (columns); c++)
    printf (" %8s", columns[c].name);
  printf (" | %8s %8s\n", "floor", "boot/fl");
  for (guint i = 0; i < n; i++)
    {
      ArchGate *ag = &ags[i];
      Stats f = stats_of (ag->floor, G_STRUCT_OFFSET (FloorSample, ready));
      Stats boot = stats_of (ag->gate, G_STRUCT_OFFSET (GateSample, boot));

      printf ("%-6s", airlock_arch_to_string (ag->arch));
      for (guint c = 0; c < G_N_ELEMENTS (columns); c++)
        {
          if (columns[c].offset == NOT_MEASURED)
            printf (" %8s", "n/a");
          else if (columns[c].offset == G_STRUCT_OFFSET (GateSample, analysis))
            bench_print_cell (stats_of (ag->gate, columns[c].offset).median * 1000, 8, "ms");
          else
            bench_print_cell (stats_of (ag->gate, columns[c].offset).median, 8, "s");
        }
      printf (" |");
      bench_print_cell (f.median, 8, "s");
      bench_print_cell (f.median > 0 && boot.median > 0 ? boot.median / f.median : -1, 8, "x");
      printf ("\n");
    }
  for (guint i = 0; i < n; i++)
    {
      Stats tot = stats_of (ags[i].gate, G_STRUCT_OFFSET (GateSample, total));
      Stats f = stats_of (ags[i].floor, G_STRUCT_OFFSET (FloorSample, ready));

      printf ("%s: total min %.2fs max %.2fs; floor min %.2fs max %.2fs\n",
              airlock_arch_to_string (ags[i].arch), tot.min, tot.max, f.min, f.max);
    }
  printf ("\nprepare = image resolved, rootfs disk and guest image from the cache, airlock_vm_new ();\n"
          "boot = domain creation to the guest's hello (bench/boot's ready), of which (define) is\n"
          "libvirt creating the domain (QEMU started, paused); controls, workload =\n"
          "WORKLOAD_START to WORKLOAD_EXIT of each phase on the guest's clock; teardown = trailer to\n"
          "domain gone; analysis = capture analysis + verdict on the host; bundle: not implemented;\n"
          "other = total minus the rest (supervisor setup around the phases, up to the trailer);\n"
          "total = the arch's gate, image resolution to verdict.  floor = bare QEMU, same kernel,\n"
          "spawn to its init's marker; boot/fl = the medians' ratio.\n\n");
  printf ("%s one after the other (warm caches): median %.2fs (min %.2fs, max %.2fs); target under "
          "%.0f s\n",
          n > 1 ? "both arches" : "the gate", b.median, b.min, b.max, TARGET_BOTH_S);
  if (cli_seq->len && cli_par->len)
    {
      Stats seq = stats_of (cli_seq, 0), par = stats_of (cli_par, 0);

      printf ("`airlock gate --out DIR` (the command, bundles written), both arches: one after the "
              "other (--sequential) median %.2fs (min %.2fs, max %.2fs); at once median %.2fs (min "
              "%.2fs, max %.2fs): %.2fx of one after the other\n",
              seq.median, seq.min, seq.max, par.median, par.min, par.max, par.median / seq.median);
    }
  else if (n > 1)
    printf ("(the command's own timing needs $AIRLOCK_CLI, which meson test --benchmark sets)\n");
}

static void
add_summary_rows (ArchGate *ags, guint n, GArray *both, GArray *cli_seq, GArray *cli_par)
{
  for (guint i = 0; i < n; i++)
    {
      const char *arch_name = airlock_arch_to_string (ags[i].arch);
      g_autofree char *boot_what = g_strdup_printf ("boot-to-ready in the gate (disk, NIC), %s",
                                                    arch_name);
      g_autofree char *total_what = g_strdup_printf ("the gate, %s (library, no bundle)", arch_name);
      double floor = stats_of (ags[i].floor, G_STRUCT_OFFSET (FloorSample, ready)).median;
      BenchSummaryRow boot = {
        .bench = "gate",
        .what = boot_what,
        .value = stats_of (ags[i].gate, G_STRUCT_OFFSET (GateSample, boot)).median,
        .unit = "s",
        .floor = floor,
        .floor_what = "bare QEMU, same kernel",
        .target = BOOT_TARGET_RATIO,
      };
      BenchSummaryRow total = {
        .bench = "gate",
        .what = total_what,
        .value = stats_of (ags[i].gate, G_STRUCT_OFFSET (GateSample, total)).median,
        .unit = "s",
        .floor = floor,
        .floor_what = "bare QEMU boot",
      };

      bench_summary_add (&boot);
      bench_summary_add (&total);
    }
  if (n > 1)
    {
      BenchSummaryRow row = {
        .bench = "gate",
        .what = "both arches one after the other (library)",
        .value = stats_of (both, 0).median,
        .unit = "s",
        .target = TARGET_BOTH_S,
        .target_is_value = TRUE,
      };

      bench_summary_add (&row);
    }
  if (cli_seq->len && cli_par->len)
    {
      double seq = stats_of (cli_seq, 0).median;
      BenchSummaryRow seq_row = {
        .bench = "gate",
        .what = "airlock gate --out, both arches, --sequential",
        .value = seq,
        .unit = "s",
        .target = TARGET_BOTH_S,
        .target_is_value = TRUE,
      };
      BenchSummaryRow par_row = {
        .bench = "gate",
        .what = "airlock gate --out, both arches at once",
        .value = stats_of (cli_par, 0).median,
        .unit = "s",
        .floor = seq,
        .floor_what = "--sequential",
        .target = 1.0,
      };

      bench_summary_add (&seq_row);
      bench_summary_add (&par_row);
    }
}

/* ---- main ---------------------------------------------------------------- */

int
main (int argc, char **argv)
{
  g_autofree char *arch_spec = NULL;
  g_autofree char *cache_dir = NULL;
  g_autofree char *reference = NULL;
  g_autofree char *tmp_dir = NULL;
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockImageSource) source = NULL;
  g_autoptr (AirlockPolicy) policy = NULL;
  g_autoptr (GArray) both = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) cli_seq = g_array_new (FALSE, FALSE, sizeof (double));
  g_autoptr (GArray) cli_par = g_array_new (FALSE, FALSE, sizeof (double));
  BenchOptions o = { .repeat = 3, .warmup = 0 };
  /* Every build reports to stage_log; .cache_dir is set once parsed. */
  AirlockGuestImageOptions img_opts = { .progress = bench_stage_progress, .progress_data = &stage_log };
  AirlockImageDiskOptions disk_opts = { .progress = bench_stage_progress, .progress_data = &stage_log };
  ArchGate ags[AIRLOCK_N_ARCHES] = { 0 };
  AirlockArch arches[AIRLOCK_N_ARCHES];
  guint n = 0;
  int status = 0;
  GOptionEntry entries[] = {
    { "arch", 'a', 0, G_OPTION_ARG_STRING, &arch_spec, "amd64, arm64 or all (default: all)", "ARCH" },
    { "repeat", 'n', 0, G_OPTION_ARG_INT, &o.repeat, "measured rounds (default: 3)", "N" },
    { "warmup", 0, 0, G_OPTION_ARG_INT, &o.warmup,
      "unmeasured rounds first (default: 0; the caches are filled before the rounds anyway)", "N" },
    { "image", 'i', 0, G_OPTION_ARG_STRING, &reference,
      "the image to gate (default: oci:$AIRLOCK_SAMPLE_DIR/clean)", "REF" },
    { "cache-dir", 0, 0, G_OPTION_ARG_FILENAME, &cache_dir,
      "cache directory (default: $AIRLOCK_CACHE_DIR or ~/.cache/airlock)", "DIR" },
    { NULL },
  };

  g_set_prgname ("bench/gate");
  /* As `airlock` does: each run reaps its own QEMU (README, "teardown"). */
  (void) airlock_vm_adopt_qemu (NULL);
  if (!bench_parse_options ("bench/gate", "- the release gate on the clean sample, per phase, "
                            "next to a bare-QEMU floor", entries, &argc, &argv))
    return EXIT_USAGE;
  if (argc > 1 || o.repeat < 1 || o.warmup < 0)
    {
      fprintf (stderr, "bench/gate: %s\n",
               argc > 1 ? "unexpected arguments" : "--repeat must be at least 1, --warmup not negative");
      return EXIT_USAGE;
    }
  if (!bench_parse_arches ("bench/gate", arch_spec, arches, &n))
    return EXIT_USAGE;
  for (guint i = 0; i < n; i++)
    ags[i].arch = arches[i];
  if (!reference && !(reference = bench_clean_sample_reference ("bench/gate")))
    return EXIT_USAGE;
  o.reference = reference;
  o.cache_dir = cache_dir;
  img_opts.cache_dir = cache_dir;
  disk_opts.cache_dir = cache_dir;
  o.img_opts = &img_opts;
  o.disk_opts = &disk_opts;
  o.cli = g_getenv ("AIRLOCK_CLI");
  source = airlock_image_source_open (reference, &error);
  if (!source)
    {
      fprintf (stderr, "bench/gate: %s\n", error->message);
      return EXIT_RUN_FAILED;
    }
  o.source = source;
  policy = airlock_policy_new_default ();
  o.policy = policy;

  tmp_dir = g_dir_make_tmp ("airlock-bench-gate-XXXXXX", &error);
  if (!tmp_dir)
    {
      fprintf (stderr, "bench/gate: cannot create a temporary directory: %s\n", error->message);
      return EXIT_RUN_FAILED;
    }
  o.tmp_dir = tmp_dir;

  /* Fill the caches first: the guest images, the rootfs disks (a first
   * build is one libguestfs launch per arch), the floors' initramfs. */
  for (guint i = 0; i < n && status == 0; i++)
    {
      ArchGate *ag = &ags[i];
      g_autoptr (AirlockImage) image = NULL;
      g_autofree char *disk = NULL;

      ag->floor = g_array_new (FALSE, FALSE, sizeof (FloorSample));
      ag->gate = g_array_new (FALSE, FALSE, sizeof (GateSample));
      ag->image = airlock_guest_image_ensure (ag->arch, &img_opts, &error);
      if (ag->image)
        image = airlock_image_resolve (source, ag->arch, &error);
      if (image)
        disk = airlock_image_disk_ensure (source, image, &disk_opts, &error);
      if (disk)
        ag->floor_initrd = bench_floor_write_initrd (ag->arch, tmp_dir, &error);
      if (!ag->floor_initrd)
        {
          fprintf (stderr, "bench/gate: %s: %s\n", airlock_arch_to_string (ag->arch), error->message);
          status = EXIT_RUN_FAILED;
          break;
        }
      ag->qemu = bench_floor_qemu_for_arch (ag->arch);
      ag->qemu_version = bench_floor_qemu_version (ag->qemu);
    }

  if (status == 0)
    {
      o.load_before = bench_load_average ();
      if (bench_rounds (ags, n, &o, both, cli_seq, cli_par))
        {
          print_table (ags, n, &o, both, cli_seq, cli_par);
          add_summary_rows (ags, n, both, cli_seq, cli_par);
        }
      else
        status = EXIT_RUN_FAILED;
      g_free (o.load_before);
    }

  for (guint i = 0; i < n; i++)
    arch_gate_clear (&ags[i]);
  (void) g_rmdir (tmp_dir);
  return status;
}
