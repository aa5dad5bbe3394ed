/* bench/boot: airlock's boot-to-ready per arch next to a bare-QEMU floor
 * measured in the same run (DESIGN.md, "What fast means here").
 *
 * The floor is the same kernel file airlock boots, under qemu-system-* with
 * the same machine, CPU model, memory and kernel command line tokens, and an
 * initramfs holding only guest/floor-init, which prints one marker line and
 * powers off.  Its "ready" is QEMU's spawn to the marker on the serial
 * console: the kernel booted and ran init.  airlock's "ready" is the domain's
 * creation to the guest's hello (AirlockVmTimings: hello - begin), which
 * includes what libvirt adds, the guest's module loading and the handshake.
 *
 * Floor and airlock runs alternate within each round (and swap order every
 * round) so that machine noise hits both alike.  Medians are printed with the
 * ratio; this is a benchmark, not a test: nothing fails on a slow ratio, but
 * the exit status is 1 when a run fails outright. */
#include "config.h"

#include "airlock.h"
#include "bench-common.h"
#include "floor.h"
#include "stats.h"
#include "summary.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define EXIT_RUN_FAILED 1
#define EXIT_USAGE 2

/* The floor (floor.c) boots with what airlock's domain gives the guest. */
#define GUEST_MEMORY_MIB BENCH_FLOOR_MEMORY_MIB
/* Issue 8: boot-to-ready within 1.2x of the floor on each arch. */
#define TARGET_RATIO 1.2
/* airlock's own timeouts end a boot and a run within about two minutes, but
 * nothing bounds libvirt's part of a teardown (a console stream's abort once
 * deadlocked there against the domain's disposal).  A benchmark must not
 * hang CI: past this, say which run is stuck and exit. */
#define AIRLOCK_RUN_WATCHDOG_S 300

typedef struct {
  double connect;   /* airlock_vm_new (): connection and sweep; not in ready */
  double ready;     /* begin → hello */
  double define;    /* begin → created */
  double start;     /* created → started (streams open, host hello, resume) */
  double kernel;    /* started → first console byte */
  double to_hello;  /* started → hello */
  double guest_up;  /* the guest's uptime in its hello: kernel and init, as the guest saw it */
  double teardown;  /* trailer → stopped */
} AirlockSample;

typedef struct {
  AirlockArch arch;
  AirlockGuestImage *image;
  char *qemu;
  char *qemu_version;
  char *floor_initrd;
  GArray *floor;       /* FloorSample, measured rounds only */
  GArray *airlock;     /* AirlockSample, measured rounds only */
  char *failure;       /* the first failure, which ends this arch's rounds */
  guint noisy_rounds;  /* rounds that started with another QEMU running */
  double steal;        /* share of the CPU time wanted during measured rounds
                        * that the hypervisor gave to someone else; -1: unknown */
} ArchBench;

typedef struct {
  int rounds;
  int warmup;
  int wait_idle_s;     /* before a round, wait this long for other QEMUs to end */
  gboolean json;
  gboolean floor_only;
  char *cmdline_tokens;
  char **floor_args;   /* extra QEMU arguments for the floor, for experiments */
  char *load_before;   /* /proc/loadavg's first three fields at the start */
} BenchOptions;

static void
arch_bench_clear (ArchBench *ab)
{
  g_clear_pointer (&ab->image, airlock_guest_image_free);
  g_clear_pointer (&ab->qemu, g_free);
  g_clear_pointer (&ab->qemu_version, g_free);
  if (ab->floor_initrd)
    (void) g_unlink (ab->floor_initrd);
  g_clear_pointer (&ab->floor_initrd, g_free);
  g_clear_pointer (&ab->floor, g_array_unref);
  g_clear_pointer (&ab->airlock, g_array_unref);
  g_clear_pointer (&ab->failure, g_free);
}

/* ---- setup -------------------------------------------------------------- */

/* /proc/stat's first line: the ticks all CPUs spent busy (steal included)
 * and stolen by the hypervisor we run under. */
static gboolean
read_cpu_ticks (guint64 *ret_busy, guint64 *ret_steal)
{
  g_autofree char *text = NULL;
  guint64 user, nice, system, idle, iowait, irq, softirq, steal;

  if (!g_file_get_contents ("/proc/stat", &text, NULL, NULL)
      || sscanf (text, "cpu %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT
                 " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT
                 " %" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT,
                 &user, &nice, &system, &idle, &iowait, &irq, &softirq, &steal) != 8)
    return FALSE;
  *ret_busy = user + nice + system + irq + softirq + steal;
  *ret_steal = steal;
  return TRUE;
}

/* ---- airlock ------------------------------------------------------------- */

static struct {
  GMutex lock;
  GCond cond;
  gint64 deadline;    /* 0: disarmed */
  char *what;         /* "amd64 round 3/5" */
  char *domain_name;  /* of the run in progress, once known */
  const char *tmp_dir;  /* to remove before giving up */
} watchdog;

/* Removes the floor initramfs files and their temporary directory. */
static void
remove_tmp_dir (const char *tmp_dir)
{
  g_autoptr (GDir) dir = g_dir_open (tmp_dir, 0, NULL);
  const char *entry;

  while (dir && (entry = g_dir_read_name (dir)))
    {
      g_autofree char *path = g_build_filename (tmp_dir, entry, NULL);

      (void) g_unlink (path);
    }
  (void) g_rmdir (tmp_dir);
}

/* Kills the QEMU of domain @name (libvirt names it in "-name guest=NAME,…"),
 * so a stuck run leaves no guest behind.  Returns the pid killed, or 0. */
static pid_t
kill_domain_qemu (const char *name)
{
  g_autoptr (GDir) proc = g_dir_open ("/proc", 0, NULL);
  g_autofree char *needle = g_strdup_printf ("guest=%s,", name);
  const char *entry;

  while (proc && (entry = g_dir_read_name (proc)))
    {
      g_autofree char *path = NULL;
      g_autofree char *cmdline = NULL;
      gsize len;

      if (!g_ascii_isdigit (entry[0]))
        continue;
      path = g_build_filename ("/proc", entry, "cmdline", NULL);
      if (!g_file_get_contents (path, &cmdline, &len, NULL))
        continue;
      for (gsize off = 0; off < len; off += strlen (cmdline + off) + 1)
        if (g_str_has_prefix (cmdline + off, needle))
          {
            pid_t pid = (pid_t) g_ascii_strtoll (entry, NULL, 10);

            (void) kill (pid, SIGKILL);
            return pid;
          }
    }
  return 0;
}

static gpointer
watchdog_thread (gpointer data)
{
  g_mutex_lock (&watchdog.lock);
  for (;;)
    {
      if (!watchdog.deadline)
        g_cond_wait (&watchdog.cond, &watchdog.lock);
      else if (g_get_monotonic_time () < watchdog.deadline)
        g_cond_wait_until (&watchdog.cond, &watchdog.lock, watchdog.deadline);
      else
        {
          pid_t killed = watchdog.domain_name ? kill_domain_qemu (watchdog.domain_name) : 0;

          fprintf (stderr, "bench/boot: %s: the airlock run (domain '%s') did not end within %d s; "
                   "%s; giving up\n", watchdog.what, watchdog.domain_name ? watchdog.domain_name : "-",
                   AIRLOCK_RUN_WATCHDOG_S, killed ? "killed its QEMU" : "no QEMU of it was running");
          fflush (stderr);
          if (watchdog.tmp_dir)
            remove_tmp_dir (watchdog.tmp_dir);
          _exit (EXIT_RUN_FAILED);
        }
    }
  g_mutex_unlock (&watchdog.lock);
  return NULL;
}

static void
watchdog_arm (const char *what)
{
  g_mutex_lock (&watchdog.lock);
  g_free (watchdog.what);
  watchdog.what = g_strdup (what);
  g_clear_pointer (&watchdog.domain_name, g_free);
  watchdog.deadline = g_get_monotonic_time () + (gint64) AIRLOCK_RUN_WATCHDOG_S * G_USEC_PER_SEC;
  g_cond_signal (&watchdog.cond);
  g_mutex_unlock (&watchdog.lock);
}

static void
watchdog_set_domain (const char *name)
{
  g_mutex_lock (&watchdog.lock);
  g_free (watchdog.domain_name);
  watchdog.domain_name = g_strdup (name);
  g_mutex_unlock (&watchdog.lock);
}

static void
watchdog_disarm (void)
{
  g_mutex_lock (&watchdog.lock);
  watchdog.deadline = 0;
  g_cond_signal (&watchdog.cond);
  g_mutex_unlock (&watchdog.lock);
}

/* Boots one airlock guest through the library, as `airlock boot` does.
 * Returns FALSE with @error set when the VM cannot be prepared or started or
 * the run is not complete. */
static gboolean
run_airlock (const ArchBench *ab, const AirlockVmOptions *vm_opts, AirlockSample *ret_sample,
             GError **error)
{
  g_autoptr (AirlockVm) vm = NULL;
  const AirlockVmTimings *t;
  const AirlockGuestHello *hello;
  gint64 before_new = g_get_monotonic_time ();
  gint64 after_new;
  GPtrArray *swept;

  vm = airlock_vm_new (ab->arch, ab->image, vm_opts, error);
  if (!vm)
    return FALSE;
  after_new = g_get_monotonic_time ();
  watchdog_set_domain (airlock_vm_get_domain_name (vm));
  swept = airlock_vm_get_swept (vm);
  for (guint i = 0; i < swept->len; i++)
    fprintf (stderr, "bench/boot: removed domain '%s' left behind by a crashed run\n",
             (const char *) swept->pdata[i]);
  if (!airlock_vm_run (vm, error))
    return FALSE;
  if (!airlock_vm_is_complete (vm))
    {
      g_autoptr (GBytes) console = airlock_vm_get_console (vm);
      gsize len;
      const guint8 *data = g_bytes_get_data (console, &len);

      bench_print_tail ("airlock console", data, len);
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_FAILED,
                   "the %s airlock run is not complete: %s", airlock_arch_to_string (ab->arch),
                   airlock_vm_get_reason (vm));
      return FALSE;
    }
  t = airlock_vm_get_timings (vm);
  ret_sample->connect = secs (before_new, after_new);
  ret_sample->ready = secs (t->begin, t->hello);
  ret_sample->define = secs (t->begin, t->created);
  ret_sample->start = secs (t->created, t->started);
  ret_sample->kernel = secs (t->started, t->first_console);
  ret_sample->to_hello = secs (t->started, t->hello);
  ret_sample->teardown = secs (t->trailer, t->stopped);
  hello = airlock_channel_get_hello (airlock_vm_get_channel (vm));
  ret_sample->guest_up = hello ? hello->uptime_ns / 1e9 : -1;
  return TRUE;
}

/* ---- rounds ------------------------------------------------------------- */

static void
bench_arch (ArchBench *ab, const BenchOptions *o, const AirlockVmOptions *vm_opts)
{
  const char *arch_name = airlock_arch_to_string (ab->arch);
  int total = o->warmup + o->rounds;
  guint64 busy_before = 0, steal_before = 0, busy_after, steal_after;
  gboolean have_ticks = FALSE;

  ab->steal = -1;
  for (int round = 0; round < total && !ab->failure; round++)
    {
      g_autoptr (GError) error = NULL;
      gboolean warm = round < o->warmup;
      guint others = bench_wait_for_other_qemus ("bench/boot", o->wait_idle_s);
      FloorSample fs = { -1, -1 };
      AirlockSample as = { -1, -1, -1, -1, -1, -1, -1, -1 };
      g_autofree char *label = warm ? g_strdup_printf ("warm-up %d/%d", round + 1, o->warmup)
                                    : g_strdup_printf ("round %d/%d", round - o->warmup + 1, o->rounds);

      if (round == o->warmup)
        have_ticks = read_cpu_ticks (&busy_before, &steal_before);
      if (others > 0)
        {
          fprintf (stderr, "bench/boot: %s %s: %u other QEMU process(es) running: numbers will be noisy\n",
                   arch_name, label, others);
          if (!warm)
            ab->noisy_rounds++;
        }
      /* Alternate which goes first, so neither always runs on a machine
       * still busy with the other's teardown. */
      for (int half = 0; half < 2 && !error; half++)
        {
          gboolean floor_turn = (half == 0) == (round % 2 == 0);
          g_autofree char *what = g_strdup_printf ("%s %s", arch_name, label);

          if (floor_turn)
            {
              BenchFloor f = {
                .arch = ab->arch,
                .qemu = ab->qemu,
                .kernel_path = ab->image->kernel_path,
                .initrd = ab->floor_initrd,
                .cmdline_tokens = o->cmdline_tokens,
                .extra_args = o->floor_args,
              };

              (void) bench_floor_run (&f, &fs, &error);
            }
          else if (!o->floor_only)
            {
              watchdog_arm (what);
              (void) run_airlock (ab, vm_opts, &as, &error);
              watchdog_disarm ();
            }
        }
      if (error)
        {
          ab->failure = g_strdup (error->message);
          fprintf (stderr, "bench/boot: %s %s: failed: %s\n", arch_name, label, error->message);
          break;
        }
      if (o->floor_only)
        fprintf (stderr, "bench/boot: %s %s: floor ready %.2fs (exit %.2fs)\n", arch_name, label,
                 fs.ready, fs.exit);
      else
        fprintf (stderr, "bench/boot: %s %s: floor ready %.2fs (exit %.2fs), airlock ready %.2fs (%.2fx)\n",
                 arch_name, label, fs.ready, fs.exit, as.ready, as.ready / fs.ready);
      if (warm)
        continue;
      g_array_append_val (ab->floor, fs);
      if (!o->floor_only)
        g_array_append_val (ab->airlock, as);
    }
  /* Under a busy hypervisor the vCPUs this machine runs on are descheduled:
   * that, not airlock, is the usual cause of a wide min-max spread. */
  if (have_ticks && read_cpu_ticks (&busy_after, &steal_after) && busy_after > busy_before)
    ab->steal = (double) (steal_after - steal_before) / (double) (busy_after - busy_before);
}

/* ---- output ------------------------------------------------------------- */

/* Ratio of the medians: the number the target is about. */
static double
ratio_of (const ArchBench *ab)
{
  Stats f = stats_of (ab->floor, G_STRUCT_OFFSET (FloorSample, ready));
  Stats a = stats_of (ab->airlock, G_STRUCT_OFFSET (AirlockSample, ready));

  return (f.median > 0 && a.median > 0) ? a.median / f.median : -1;
}

/* Median of each round's airlock/floor ratio.  The two runs of a round are
 * seconds apart, so a slow spell of the machine mostly hits both: this is
 * the steadier estimate when the spread is wide. */
static double
paired_ratio_of (const ArchBench *ab)
{
  g_autoptr (GArray) ratios = g_array_new (FALSE, FALSE, sizeof (double));
  Stats s;

  if (ab->airlock->len != ab->floor->len)
    return -1;
  for (guint i = 0; i < ab->floor->len; i++)
    {
      double f = g_array_index (ab->floor, FloorSample, i).ready;
      double a = g_array_index (ab->airlock, AirlockSample, i).ready;
      double r = (f > 0 && a > 0) ? a / f : -1;

      g_array_append_val (ratios, r);
    }
  s = stats_of (ratios, 0);
  return s.median;
}

static void
print_table (ArchBench *benches, guint n, const BenchOptions *o)
{
  printf ("boot-to-ready under TCG, %d MiB, 1 vCPU; median of %d round(s) after %d warm-up(s), "
          "floor and airlock interleaved; load average before: %s\n",
          GUEST_MEMORY_MIB, o->rounds, o->warmup, o->load_before);
  for (guint i = 0; i < n; i++)
    printf ("  %s: %s; kernel %s\n", airlock_arch_to_string (benches[i].arch),
            benches[i].qemu_version, benches[i].image->kernel_path);

  printf ("\n%-6s %7s %7s %7s | %7s %7s %7s | %7s %7s\n", "arch", "floor", "min", "max", "airlock",
          "min", "max", "ratio", "paired");
  for (guint i = 0; i < n; i++)
    {
      ArchBench *ab = &benches[i];
      Stats f = stats_of (ab->floor, G_STRUCT_OFFSET (FloorSample, ready));
      Stats a = stats_of (ab->airlock, G_STRUCT_OFFSET (AirlockSample, ready));

      printf ("%-6s", airlock_arch_to_string (ab->arch));
      bench_print_cell (f.median, 7, "s");
      bench_print_cell (f.min, 7, "s");
      bench_print_cell (f.max, 7, "s");
      printf (" |");
      bench_print_cell (a.median, 7, "s");
      bench_print_cell (a.min, 7, "s");
      bench_print_cell (a.max, 7, "s");
      printf (" |");
      bench_print_cell (ratio_of (ab), 7, "x");
      bench_print_cell (paired_ratio_of (ab), 7, "x");
      printf ("\n");
    }

  printf ("\n%-6s %7s | %7s %7s %7s %7s %7s %7s %7s\n", "median", "f-exit", "connect", "define",
          "start", "console", "guestup", "hello", "teardwn");
  for (guint i = 0; i < n; i++)
    {
      ArchBench *ab = &benches[i];
      static const gsize airlock_columns[] = {
        G_STRUCT_OFFSET (AirlockSample, connect), G_STRUCT_OFFSET (AirlockSample, define),
        G_STRUCT_OFFSET (AirlockSample, start), G_STRUCT_OFFSET (AirlockSample, kernel),
        G_STRUCT_OFFSET (AirlockSample, guest_up), G_STRUCT_OFFSET (AirlockSample, to_hello),
        G_STRUCT_OFFSET (AirlockSample, teardown),
      };

      printf ("%-6s", airlock_arch_to_string (ab->arch));
      bench_print_cell (stats_of (ab->floor, G_STRUCT_OFFSET (FloorSample, exit)).median, 7, "s");
      printf (" |");
      for (guint c = 0; c < G_N_ELEMENTS (airlock_columns); c++)
        bench_print_cell (stats_of (ab->airlock, airlock_columns[c]).median, 7, "s");
      printf ("\n");
    }
  printf ("f-exit: the floor's spawn to QEMU gone.  airlock: connect = airlock_vm_new (), not in\n"
          "ready; define = domain created, vCPUs paused; start = streams open, host hello sent,\n"
          "resumed; console = resumed to first console byte (init's first line: the kernel is\n"
          "quiet); guestup = the guest's uptime in its hello; hello = resumed to hello;\n"
          "ready = define + start + hello; teardwn = trailer to domain gone.\n\n");
  for (guint i = 0; i < n; i++)
    {
      ArchBench *ab = &benches[i];
      const char *arch_name = airlock_arch_to_string (ab->arch);
      double ratio = ratio_of (ab);

      if (ab->noisy_rounds)
        printf ("%s: %u of %d round(s) ran next to another QEMU: noisy\n", arch_name,
                ab->noisy_rounds, o->rounds);
      if (ab->steal >= 0.05)
        printf ("%s: the hypervisor stole %.0f%% of the CPU time the runs wanted: noisy\n",
                arch_name, ab->steal * 100);
      if (ab->failure)
        printf ("%s: failed: %s\n", arch_name, ab->failure);
      else if (ratio > 0)
        printf ("%s: boot-to-ready ratio: %.2fx (target %.1fx)\n", arch_name, ratio, TARGET_RATIO);
    }
}

static void
add_summary_rows (ArchBench *benches, guint n)
{
  for (guint i = 0; i < n; i++)
    {
      ArchBench *ab = &benches[i];
      g_autofree char *what = g_strdup_printf ("boot-to-ready, %s", airlock_arch_to_string (ab->arch));
      BenchSummaryRow row = {
        .bench = "boot",
        .what = what,
        .value = stats_of (ab->airlock, G_STRUCT_OFFSET (AirlockSample, ready)).median,
        .unit = "s",
        .floor = stats_of (ab->floor, G_STRUCT_OFFSET (FloorSample, ready)).median,
        .floor_what = "bare QEMU, same kernel",
        .target = TARGET_RATIO,
      };

      if (!ab->failure)
        bench_summary_add (&row);
    }
}

static void
json_add_stats (JsonBuilder *b, const char *name, GArray *samples, gsize offset)
{
  Stats s = stats_of (samples, offset);

  json_builder_set_member_name (b, name);
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "median");
  json_builder_add_double_value (b, s.median);
  json_builder_set_member_name (b, "min");
  json_builder_add_double_value (b, s.min);
  json_builder_set_member_name (b, "max");
  json_builder_add_double_value (b, s.max);
  json_builder_set_member_name (b, "samples");
  json_builder_begin_array (b);
  for (guint i = 0; i < samples->len; i++)
    {
      const char *base = samples->data + (gsize) i * g_array_get_element_size (samples);

      json_builder_add_double_value (b, *(const double *) (base + offset));
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
}

static void
print_json (ArchBench *benches, guint n, const BenchOptions *o)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = NULL;
  g_autofree char *text = NULL;

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "accel");
  json_builder_add_string_value (b, "tcg");
  json_builder_set_member_name (b, "memory_mib");
  json_builder_add_int_value (b, GUEST_MEMORY_MIB);
  json_builder_set_member_name (b, "rounds");
  json_builder_add_int_value (b, o->rounds);
  json_builder_set_member_name (b, "warmup");
  json_builder_add_int_value (b, o->warmup);
  json_builder_set_member_name (b, "load_before");
  json_builder_add_string_value (b, o->load_before);
  json_builder_set_member_name (b, "target_ratio");
  json_builder_add_double_value (b, TARGET_RATIO);
  json_builder_set_member_name (b, "arches");
  json_builder_begin_array (b);
  for (guint i = 0; i < n; i++)
    {
      ArchBench *ab = &benches[i];
      double ratio = ratio_of (ab);
      double paired = paired_ratio_of (ab);

      json_builder_begin_object (b);
      json_builder_set_member_name (b, "arch");
      json_builder_add_string_value (b, airlock_arch_to_string (ab->arch));
      json_builder_set_member_name (b, "qemu");
      json_builder_add_string_value (b, ab->qemu_version);
      json_builder_set_member_name (b, "kernel");
      json_builder_add_string_value (b, ab->image->kernel_path);
      json_builder_set_member_name (b, "kernel_sha256");
      json_builder_add_string_value (b, ab->image->kernel_sha256);
      json_builder_set_member_name (b, "noisy_rounds");
      json_builder_add_int_value (b, ab->noisy_rounds);
      json_builder_set_member_name (b, "steal");
      if (ab->steal >= 0)
        json_builder_add_double_value (b, ab->steal);
      else
        json_builder_add_null_value (b);
      json_builder_set_member_name (b, "failure");
      if (ab->failure)
        json_builder_add_string_value (b, ab->failure);
      else
        json_builder_add_null_value (b);
      json_builder_set_member_name (b, "ratio");
      if (ratio > 0)
        json_builder_add_double_value (b, ratio);
      else
        json_builder_add_null_value (b);
      json_builder_set_member_name (b, "paired_ratio");
      if (paired > 0)
        json_builder_add_double_value (b, paired);
      else
        json_builder_add_null_value (b);
      json_builder_set_member_name (b, "floor");
      json_builder_begin_object (b);
      json_add_stats (b, "ready", ab->floor, G_STRUCT_OFFSET (FloorSample, ready));
      json_add_stats (b, "exit", ab->floor, G_STRUCT_OFFSET (FloorSample, exit));
      json_builder_end_object (b);
      json_builder_set_member_name (b, "airlock");
      json_builder_begin_object (b);
      json_add_stats (b, "ready", ab->airlock, G_STRUCT_OFFSET (AirlockSample, ready));
      json_add_stats (b, "connect", ab->airlock, G_STRUCT_OFFSET (AirlockSample, connect));
      json_add_stats (b, "define", ab->airlock, G_STRUCT_OFFSET (AirlockSample, define));
      json_add_stats (b, "start", ab->airlock, G_STRUCT_OFFSET (AirlockSample, start));
      json_add_stats (b, "first_console", ab->airlock, G_STRUCT_OFFSET (AirlockSample, kernel));
      json_add_stats (b, "start_to_hello", ab->airlock, G_STRUCT_OFFSET (AirlockSample, to_hello));
      json_add_stats (b, "guest_uptime_at_hello", ab->airlock, G_STRUCT_OFFSET (AirlockSample, guest_up));
      json_add_stats (b, "teardown", ab->airlock, G_STRUCT_OFFSET (AirlockSample, teardown));
      json_builder_end_object (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);

  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  text = json_generator_to_data (gen, NULL);
  printf ("%s\n", text);
}

/* ---- main --------------------------------------------------------------- */

int
main (int argc, char **argv)
{
  g_autofree char *arch_spec = NULL;
  g_autofree char *cache_dir = NULL;
  g_autofree char *cmdline_tokens = NULL;
  g_auto (GStrv) floor_args = NULL;
  g_autofree char *tmp_dir = NULL;
  g_auto (BenchStageLog) stage_log = { "bench/boot", NULL };
  g_autofree char *load_before = NULL;
  g_autoptr (GError) error = NULL;
  BenchOptions o = { .rounds = 5, .warmup = 1 };
  ArchBench benches[AIRLOCK_N_ARCHES] = { 0 };
  AirlockArch arches[AIRLOCK_N_ARCHES];
  guint n = 0;
  int status = 0;
  GOptionEntry entries[] = {
    { "arch", 'a', 0, G_OPTION_ARG_STRING, &arch_spec, "amd64, arm64 or all (default: all)", "ARCH" },
    { "rounds", 'n', 0, G_OPTION_ARG_INT, &o.rounds, "measured rounds per arch (default: 5)", "N" },
    { "warmup", 0, 0, G_OPTION_ARG_INT, &o.warmup, "unmeasured rounds first (default: 1)", "N" },
    { "wait-idle", 0, 0, G_OPTION_ARG_INT, &o.wait_idle_s,
      "before each round, wait up to S seconds for other QEMUs to end (default: 0)", "S" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &o.json, "print the results as JSON, with every sample", NULL },
    { "cache-dir", 0, 0, G_OPTION_ARG_FILENAME, &cache_dir,
      "cache directory (default: $AIRLOCK_CACHE_DIR or ~/.cache/airlock)", "DIR" },
    { "floor-only", 0, 0, G_OPTION_ARG_NONE, &o.floor_only, "boot only the floor (for experiments)", NULL },
    { "floor-cmdline", 0, 0, G_OPTION_ARG_STRING, &cmdline_tokens,
      "the floor's kernel arguments after console= (default: those of airlock's domain)", "ARGS" },
    { "floor-qemu-arg", 0, 0, G_OPTION_ARG_STRING_ARRAY, &floor_args,
      "append one argument to the floor's QEMU command line (repeatable, for experiments)", "ARG" },
    { NULL },
  };

  g_set_prgname ("bench/boot");
  /* As `airlock` does: each run reaps its own QEMU (README, "teardown"). */
  (void) airlock_vm_adopt_qemu (NULL);
  g_thread_unref (g_thread_new ("bench-watchdog", watchdog_thread, NULL));
  if (!bench_parse_options ("bench/boot", "- airlock boot-to-ready next to a bare-QEMU floor",
                            entries, &argc, &argv))
    return EXIT_USAGE;
  if (argc > 1 || o.rounds < 1 || o.warmup < 0 || o.wait_idle_s < 0)
    {
      fprintf (stderr, "bench/boot: %s\n",
               argc > 1 ? "unexpected arguments"
                        : "--rounds must be at least 1, --warmup and --wait-idle not negative");
      return EXIT_USAGE;
    }
  o.cmdline_tokens = cmdline_tokens;
  o.floor_args = floor_args;
  if (!bench_parse_arches ("bench/boot", arch_spec, arches, &n))
    return EXIT_USAGE;
  for (guint i = 0; i < n; i++)
    benches[i].arch = arches[i];

  tmp_dir = g_dir_make_tmp ("airlock-bench-boot-XXXXXX", &error);
  if (!tmp_dir)
    {
      fprintf (stderr, "bench/boot: cannot create a temporary directory: %s\n", error->message);
      return EXIT_RUN_FAILED;
    }
  g_mutex_lock (&watchdog.lock);
  watchdog.tmp_dir = tmp_dir;
  g_mutex_unlock (&watchdog.lock);

  {
    AirlockGuestImageOptions img_opts = {
      .cache_dir = cache_dir,
      .progress = bench_stage_progress,
      .progress_data = &stage_log,
    };
    /* TCG explicitly: the floor is TCG, and a KVM probe would only add noise.
     * A 1 ms run: only the boot is measured, the rest is kept short. */
    AirlockVmOptions vm_opts = {
      .cache_dir = cache_dir,
      .accel = AIRLOCK_ACCEL_TCG,
      .memory_mib = GUEST_MEMORY_MIB,
      .guest_run_ms = 1,
    };

    for (guint i = 0; i < n && status == 0; i++)
      {
        ArchBench *ab = &benches[i];

        ab->floor = g_array_new (FALSE, FALSE, sizeof (FloorSample));
        ab->airlock = g_array_new (FALSE, FALSE, sizeof (AirlockSample));
        ab->image = airlock_guest_image_ensure (ab->arch, &img_opts, &error);
        if (!ab->image)
          {
            fprintf (stderr, "bench/boot: %s\n", error->message);
            status = EXIT_RUN_FAILED;
            break;
          }
        ab->floor_initrd = bench_floor_write_initrd (ab->arch, tmp_dir, &error);
        if (!ab->floor_initrd)
          {
            fprintf (stderr, "bench/boot: %s\n", error->message);
            status = EXIT_RUN_FAILED;
            break;
          }
        ab->qemu = bench_floor_qemu_for_arch (ab->arch);
        ab->qemu_version = bench_floor_qemu_version (ab->qemu);
      }

    load_before = bench_load_average ();
    o.load_before = load_before;
    for (guint i = 0; i < n && status == 0; i++)
      bench_arch (&benches[i], &o, &vm_opts);
  }

  if (status == 0)
    {
      if (o.json)
        print_json (benches, n, &o);
      else
        print_table (benches, n, &o);
      if (!o.floor_only)
        add_summary_rows (benches, n);
      for (guint i = 0; i < n; i++)
        if (benches[i].failure)
          status = EXIT_RUN_FAILED;
    }

  for (guint i = 0; i < n; i++)
    arch_bench_clear (&benches[i]);
  remove_tmp_dir (tmp_dir);
  return status;
}
