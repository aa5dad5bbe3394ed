/* bench/parallel: concurrent release gates on this machine's cores.
 *
 * For each level N (default 1, 2 and 4), N `airlock gate` processes of the
 * clean sample start at once, each with its own embedded libvirt slot, as N
 * pipeline jobs on one runner would; the batch ends when the last one does.
 * Per level: the per-run latency (each gate's wall time, start to exit),
 * the batch's wall time, the throughput (gates per minute), and the peak
 * resident memory of each run's QEMU (VmHWM, read from /proc while it runs;
 * this program is a child subreaper, so the QEMUs libvirt daemonizes stay
 * its descendants and are found).  The floor is level 1, measured in the
 * same run: ratios are against it.  Levels rotate their order from round to
 * round so drift hits them alike.  A benchmark, not a test: exit 1 only when
 * a gate fails outright (its output is printed). */
#define _GNU_SOURCE

#include "config.h"

#include "stats.h"
#include "summary.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define EXIT_RUN_FAILED 1
#define EXIT_USAGE 2
#define LEVELS_MAX 8
#define POLL_US 50000

typedef struct {
  double latency;        /* one gate, s */
} RunSample;

typedef struct {
  double batch;          /* the level's batch, s */
  double throughput;     /* gates per minute */
} BatchSample;

typedef struct {
  guint n;
  GArray *runs;          /* RunSample */
  GArray *batches;       /* BatchSample */
  GArray *rss;           /* double: peak MiB of each QEMU */
} Level;

typedef struct {
  pid_t pid;
  gint64 start, end;
  char *log;
  int status;
} Gate;

/* The peak resident set (VmHWM) of every QEMU seen, by pid. */
typedef struct {
  GHashTable *peak_kib;  /* pid → guint64 */
} RssWatch;

static gboolean
read_stat (pid_t pid, char *ret_comm, gsize comm_len, pid_t *ret_ppid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/stat", (int) pid);
  g_autofree char *text = NULL;
  const char *open_paren, *close_paren;
  gsize len;
  int ppid;

  if (!g_file_get_contents (path, &text, NULL, NULL))
    return FALSE;
  /* comm is in parentheses and may hold spaces or parentheses itself. */
  open_paren = strchr (text, '(');
  close_paren = strrchr (text, ')');
  if (!open_paren || !close_paren || close_paren < open_paren)
    return FALSE;
  len = MIN ((gsize) (close_paren - open_paren - 1), comm_len - 1);
  memcpy (ret_comm, open_paren + 1, len);
  ret_comm[len] = '\0';
  if (sscanf (close_paren + 1, " %*c %d", &ppid) != 1)
    return FALSE;
  *ret_ppid = ppid;
  return TRUE;
}

static guint64
vm_hwm_kib (pid_t pid)
{
  g_autofree char *path = g_strdup_printf ("/proc/%d/status", (int) pid);
  g_autofree char *text = NULL;
  const char *p;

  if (!g_file_get_contents (path, &text, NULL, NULL) || !(p = strstr (text, "VmHWM:")))
    return 0;
  return g_ascii_strtoull (p + strlen ("VmHWM:"), NULL, 10);
}

/* Every qemu-system-* process whose parent chain reaches us. */
static void
rss_poll (RssWatch *w)
{
  g_autoptr (GDir) dir = g_dir_open ("/proc", 0, NULL);
  g_autoptr (GHashTable) parent = g_hash_table_new (g_direct_hash, g_direct_equal);
  g_autoptr (GArray) qemus = g_array_new (FALSE, FALSE, sizeof (pid_t));
  const char *name;
  pid_t self = getpid ();

  while (dir && (name = g_dir_read_name (dir)))
    {
      char comm[64];
      pid_t pid = (pid_t) atoi (name), ppid;

      if (pid <= 0 || !read_stat (pid, comm, sizeof comm, &ppid))
        continue;
      g_hash_table_insert (parent, GINT_TO_POINTER (pid), GINT_TO_POINTER (ppid));
      if (g_str_has_prefix (comm, "qemu-system"))
        g_array_append_val (qemus, pid);
    }
  for (guint i = 0; i < qemus->len; i++)
    {
      pid_t q = g_array_index (qemus, pid_t, i), p = q;

      for (int depth = 0; depth < 16 && p > 1 && p != self; depth++)
        p = GPOINTER_TO_INT (g_hash_table_lookup (parent, GINT_TO_POINTER (p)));
      if (p == self)
        {
          guint64 kib = vm_hwm_kib (q);
          guint64 old = GPOINTER_TO_SIZE (g_hash_table_lookup (w->peak_kib, GINT_TO_POINTER (q)));

          if (kib > old)
            g_hash_table_insert (w->peak_kib, GINT_TO_POINTER (q), GSIZE_TO_POINTER (kib));
        }
    }
}

static pid_t
spawn_gate (const char *cli, const char *arch, const char *image, const char *log)
{
  pid_t pid = fork ();

  if (pid == 0)
    {
      int fd = open (log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      int null = open ("/dev/null", O_RDONLY | O_CLOEXEC);

      if (fd < 0 || null < 0 || dup2 (null, 0) < 0 || dup2 (fd, 1) < 0 || dup2 (fd, 2) < 0)
        _exit (127);
      execl (cli, cli, "gate", "--arch", arch, "--image", image, "--accel", "tcg", (char *) NULL);
      _exit (127);
    }
  return pid;
}

/* Runs @n gates at once; FALSE (and their output printed) when one fails. */
static gboolean
run_batch (const char *cli, const char *arch, const char *image, const char *workdir, guint n,
           Level *level)
{
  Gate gates[LEVELS_MAX];
  RssWatch w = { g_hash_table_new (g_direct_hash, g_direct_equal) };
  gint64 batch_start = g_get_monotonic_time ();
  guint running = n;
  gboolean ok = TRUE;
  GHashTableIter it;
  gpointer value;
  BatchSample b;

  for (guint i = 0; i < n; i++)
    {
      gates[i].log = g_strdup_printf ("%s/gate-%u.log", workdir, i);
      gates[i].start = g_get_monotonic_time ();
      gates[i].end = 0;
      gates[i].pid = spawn_gate (cli, arch, image, gates[i].log);
      if (gates[i].pid < 0)
        {
          g_printerr ("parallel: cannot start '%s': %s\n", cli, g_strerror (errno));
          return FALSE;
        }
    }
  while (running > 0)
    {
      int status;
      pid_t pid;

      rss_poll (&w);
      /* Reaps our gates, and whatever daemonized QEMU ends as our orphan. */
      while ((pid = waitpid (-1, &status, WNOHANG)) > 0)
        for (guint i = 0; i < n; i++)
          if (gates[i].pid == pid && !gates[i].end)
            {
              gates[i].end = g_get_monotonic_time ();
              gates[i].status = status;
              running--;
            }
      if (running > 0)
        g_usleep (POLL_US);
    }
  b.batch = secs (batch_start, g_get_monotonic_time ());
  b.throughput = b.batch > 0 ? n * 60.0 / b.batch : -1;
  g_array_append_val (level->batches, b);
  for (guint i = 0; i < n; i++)
    {
      RunSample r = { secs (gates[i].start, gates[i].end) };

      if (!WIFEXITED (gates[i].status) || WEXITSTATUS (gates[i].status) != 0)
        {
          g_autofree char *text = NULL;

          g_file_get_contents (gates[i].log, &text, NULL, NULL);
          g_printerr ("parallel: gate %u of %u did not pass (wait status 0x%x):\n%s\n", i + 1, n,
                      gates[i].status, text ? text : "(no output)");
          ok = FALSE;
        }
      g_array_append_val (level->runs, r);
      g_unlink (gates[i].log);
      g_free (gates[i].log);
    }
  g_hash_table_iter_init (&it, w.peak_kib);
  while (g_hash_table_iter_next (&it, NULL, &value))
    {
      double mib = GPOINTER_TO_SIZE (value) / 1024.0;

      g_array_append_val (level->rss, mib);
    }
  g_hash_table_unref (w.peak_kib);
  return ok;
}

int
main (int argc, char **argv)
{
  g_autofree char *arch = g_strdup ("amd64");
  g_autofree char *levels_text = g_strdup ("1,2,4");
  gint rounds = 3;
  gboolean json = FALSE;
  GOptionEntry entries[] = {
    { "arch", 0, 0, G_OPTION_ARG_STRING, &arch, "amd64 or arm64 (default amd64)", "ARCH" },
    { "levels", 0, 0, G_OPTION_ARG_STRING, &levels_text, "concurrent gates per batch (default 1,2,4)", "LIST" },
    { "rounds", 0, 0, G_OPTION_ARG_INT, &rounds, "batches per level (default 3)", "N" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "one JSON object per level", NULL },
    { NULL },
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("- concurrent gates: latency, throughput, QEMU memory");
  g_autoptr (GError) error = NULL;
  g_auto (GStrv) level_names = NULL;
  const char *cli = g_getenv ("AIRLOCK_CLI");
  const char *samples = g_getenv ("AIRLOCK_SAMPLE_DIR");
  g_autofree char *image = NULL;
  g_autofree char *workdir = NULL;
  Level levels[LEVELS_MAX];
  guint n_levels = 0;
  gboolean ok = TRUE;
  double base_latency = -1, base_throughput = -1;

  g_option_context_add_main_entries (context, entries, NULL);
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      g_printerr ("parallel: %s\n", error->message);
      return EXIT_USAGE;
    }
  if (!cli || !samples)
    {
      g_printerr ("parallel: AIRLOCK_CLI and AIRLOCK_SAMPLE_DIR must name the airlock command and "
                  "the sample images (meson test --benchmark sets them)\n");
      return EXIT_USAGE;
    }
  if (!g_str_equal (arch, "amd64") && !g_str_equal (arch, "arm64"))
    {
      g_printerr ("parallel: --arch: '%s' is not amd64 or arm64\n", arch);
      return EXIT_USAGE;
    }
  level_names = g_strsplit (levels_text, ",", -1);
  for (guint i = 0; level_names[i] && n_levels < LEVELS_MAX; i++)
    {
      guint64 n;

      if (!g_ascii_string_to_unsigned (level_names[i], 10, 1, LEVELS_MAX, &n, NULL))
        {
          g_printerr ("parallel: --levels: '%s' is not a number from 1 to %d\n", level_names[i],
                      LEVELS_MAX);
          return EXIT_USAGE;
        }
      levels[n_levels].n = (guint) n;
      levels[n_levels].runs = g_array_new (FALSE, FALSE, sizeof (RunSample));
      levels[n_levels].batches = g_array_new (FALSE, FALSE, sizeof (BatchSample));
      levels[n_levels].rss = g_array_new (FALSE, FALSE, sizeof (double));
      n_levels++;
    }
  if (n_levels == 0 || levels[0].n != 1)
    {
      g_printerr ("parallel: --levels must start with 1 (the floor the others are compared to)\n");
      return EXIT_USAGE;
    }
  if (prctl (PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
    {
      g_printerr ("parallel: cannot become a child subreaper: %s\n", g_strerror (errno));
      return EXIT_RUN_FAILED;
    }
  image = g_strdup_printf ("oci:%s/clean", samples);
  workdir = g_dir_make_tmp ("airlock-bench-parallel-XXXXXX", &error);
  if (!workdir)
    {
      g_printerr ("parallel: %s\n", error->message);
      return EXIT_RUN_FAILED;
    }

  /* One unmeasured gate: the rootfs disk and the guest image into the
   * cache, libvirt's first QEMU probe. */
  g_printerr ("parallel: %s, warm-up gate\n", arch);
  {
    Level warm = { 1, g_array_new (FALSE, FALSE, sizeof (RunSample)),
                   g_array_new (FALSE, FALSE, sizeof (BatchSample)), g_array_new (FALSE, FALSE, sizeof (double)) };

    ok = run_batch (cli, arch, image, workdir, 1, &warm);
    g_array_unref (warm.runs);
    g_array_unref (warm.batches);
    g_array_unref (warm.rss);
  }
  for (gint round = 0; ok && round < rounds; round++)
    for (guint k = 0; ok && k < n_levels; k++)
      {
        /* Rotated order: level (k + round) % n_levels. */
        Level *l = &levels[(k + (guint) round) % n_levels];

        g_printerr ("parallel: round %d/%d, %u at once\n", round + 1, rounds, l->n);
        ok = run_batch (cli, arch, image, workdir, l->n, l);
      }
  g_rmdir (workdir);
  if (!ok)
    return EXIT_RUN_FAILED;

  if (!json)
    {
      g_print ("bench/parallel: `airlock gate` of the clean sample on %s, N at once, %d rounds, "
               "%u cores (TCG)\n\n", arch, rounds, g_get_num_processors ());
      g_print ("  N   latency s (median)  x floor   batch s   gates/min   x floor   QEMU peak RSS MiB (median, max)\n");
    }
  for (guint k = 0; k < n_levels; k++)
    {
      Level *l = &levels[k];
      Stats lat = stats_of (l->runs, G_STRUCT_OFFSET (RunSample, latency));
      Stats batch = stats_of (l->batches, G_STRUCT_OFFSET (BatchSample, batch));
      Stats tput = stats_of (l->batches, G_STRUCT_OFFSET (BatchSample, throughput));
      /* A GArray of doubles is its own sample: offset 0. */
      double rss_median = stats_of (l->rss, 0).median, rss_max = 0;

      for (guint i = 0; i < l->rss->len; i++)
        rss_max = MAX (rss_max, g_array_index (l->rss, double, i));
      if (l->n == 1)
        {
          base_latency = lat.median;
          base_throughput = tput.median;
        }
      if (json)
        g_print ("{\"arch\":\"%s\",\"n\":%u,\"latency_s\":%.3f,\"latency_ratio\":%.3f,\"batch_s\":%.3f,"
                 "\"gates_per_min\":%.2f,\"throughput_ratio\":%.3f,\"qemu_rss_mib\":%.1f,"
                 "\"qemu_rss_max_mib\":%.1f}\n",
                 arch, l->n, lat.median, lat.median / base_latency, batch.median, tput.median,
                 tput.median / base_throughput, rss_median, rss_max);
      else
        g_print ("  %-3u %8.2f (%5.2f-%5.2f)  %5.2fx   %7.2f   %9.2f   %5.2fx   %6.1f, %6.1f\n",
                 l->n, lat.median, lat.min, lat.max, lat.median / base_latency, batch.median,
                 tput.median, tput.median / base_throughput, rss_median, rss_max);
      if (l->n > 1)
        {
          g_autofree char *tput_what = g_strdup_printf ("throughput, %u gates at once (%s)", l->n, arch);
          g_autofree char *lat_what = g_strdup_printf ("latency per gate, %u at once (%s)", l->n, arch);
          BenchSummaryRow tput_row = {
            .bench = "parallel",
            .what = tput_what,
            .value = tput.median,
            .unit = "gates/min",
            .floor = base_throughput,
            .floor_what = "one at a time",
          };
          BenchSummaryRow lat_row = {
            .bench = "parallel",
            .what = lat_what,
            .value = lat.median,
            .unit = "s",
            .floor = base_latency,
            .floor_what = "one at a time",
          };

          bench_summary_add (&tput_row);
          bench_summary_add (&lat_row);
        }
      else
        {
          g_autofree char *rss_what = g_strdup_printf ("QEMU peak RSS per VM (%s)", arch);
          BenchSummaryRow rss_row = {
            .bench = "parallel",
            .what = rss_what,
            .value = rss_median,
            .unit = "MiB",
          };

          bench_summary_add (&rss_row);
        }
      g_array_unref (l->runs);
      g_array_unref (l->batches);
      g_array_unref (l->rss);
    }
  if (!json)
    g_print ("\n  floor: N = 1 in the same run.  Throughput x floor above 1 is what running gates\n"
             "  at once buys on %u cores; latency x floor is what each pipeline job pays for it.\n",
             g_get_num_processors ());
  return 0;
}
