/* airlock gate: the release gate.  `run --image --controls` on every arch
 * (cmd-run.c's run_command, which checks every input and resolves the image
 * on each arch before any boot), then the verdict of each under the policy
 * (lib/policy, default: no egress): the table of arches, every reason, and
 * the exit status the pipeline acts on.  Over several images (--image
 * again, --images FILE): every image resolved on every arch first, then
 * each image's gate in turn (over a pool of hypervisors, as many at once
 * as its slots hold), each with its bundles in a directory of its own, and
 * a table of images at the end. */
#include "config.h"

#include "harness.h"
#include "cmd-run.h"
#include "run-report.h"
#include "table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* `airlock gate`: `run --image --controls` on every arch, then the verdict
 * (lib/gate/verdict.h) under the policy (lib/policy, default: no egress). */
static int gate_report (RunReport *r);

static int gate_list (int argc, char **argv);

int
cmd_gate (int argc, char **argv)
{
  /* Any spelling of --image or --images (gate_list() hands a single
   * --image back to run_command() unchanged). */
  for (int i = 1; i < argc && !g_str_equal (argv[i], "--"); i++)
    if (g_str_has_prefix (argv[i], "--image") || g_str_has_prefix (argv[i], "-i"))
      return gate_list (argc, argv);
  return run_command (argc, argv, gate_report);
}

/* ---- a gate over several images ---- */

/* What the list needs of the command line; everything else goes to each
 * image's gate as it was given. */
typedef struct {
  GStrv image_opts;       /* --image, in order */
  char *images_file;      /* --images */
  char *out_dir;
  char *junit;
  char *arch_spec;
  char *stdin_file;
  GStrv connect;          /* --connect, in order: the pool, handed on to each image */
  int host_slots;         /* --host-slots, handed on (run_command() checks it);
                           * G_MININT: not given */
  gboolean json;
  GPtrArray *errors;      /* char *: every message printed, for the --json summary */
  GPtrArray *rest;        /* argv[0] and the options for each image's gate */
  GPtrArray *workload;    /* "--" and after */
} ListArgs;

static void
list_args_clear (ListArgs *a)
{
  g_strfreev (a->image_opts);
  g_free (a->images_file);
  g_free (a->out_dir);
  g_free (a->junit);
  g_free (a->arch_spec);
  g_free (a->stdin_file);
  g_strfreev (a->connect);
  g_clear_pointer (&a->errors, g_ptr_array_unref);
  g_clear_pointer (&a->rest, g_ptr_array_unref);
  g_clear_pointer (&a->workload, g_ptr_array_unref);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (ListArgs, list_args_clear)

static void G_GNUC_PRINTF (2, 3)
list_error (ListArgs *a, const char *format, ...)
{
  va_list ap;

  va_start (ap, format);
  harness_keep_error (a->errors, "airlock gate", format, ap);
  va_end (ap);
}

/* Takes the list's options out of @argv (GOption, unknown options left
 * for each image's gate, which checks them).  FALSE after an error. */
static gboolean
list_args_parse (int argc, char **argv, ListArgs *a)
{
  g_autoptr (GOptionContext) ctx = g_option_context_new (NULL);
  g_autoptr (GError) error = NULL;
  g_autofree char **opts = g_new0 (char *, argc + 1);
  int n_opts = 0;
  int i;
  GOptionEntry entries[] = {
    { "image", 'i', 0, G_OPTION_ARG_STRING_ARRAY, &a->image_opts, NULL, NULL },
    { "images", 0, 0, G_OPTION_ARG_FILENAME, &a->images_file, NULL, NULL },
    { "out", 'o', 0, G_OPTION_ARG_FILENAME, &a->out_dir, NULL, NULL },
    { "junit", 0, 0, G_OPTION_ARG_FILENAME, &a->junit, NULL, NULL },
    { "arch", 'a', 0, G_OPTION_ARG_STRING, &a->arch_spec, NULL, NULL },
    { "stdin", 0, 0, G_OPTION_ARG_FILENAME, &a->stdin_file, NULL, NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &a->json, NULL, NULL },
    { "connect", 'c', 0, G_OPTION_ARG_STRING_ARRAY, &a->connect, NULL, NULL },
    { "host-slots", 0, 0, G_OPTION_ARG_INT, &a->host_slots, NULL, NULL },
    { NULL },
  };

  a->host_slots = G_MININT;
  a->errors = g_ptr_array_new_with_free_func (g_free);
  a->rest = g_ptr_array_new_with_free_func (g_free);
  a->workload = g_ptr_array_new_with_free_func (g_free);
  for (i = 0; i < argc && !g_str_equal (argv[i], "--"); i++)
    opts[n_opts++] = argv[i];
  for (; i < argc; i++)
    g_ptr_array_add (a->workload, g_strdup (argv[i]));
  g_option_context_set_ignore_unknown_options (ctx, TRUE);
  g_option_context_set_help_enabled (ctx, FALSE);
  g_option_context_add_main_entries (ctx, entries, NULL);
  {
    /* g_option_context_parse() rearranges the array it is given. */
    char **parse = opts;

    if (!g_option_context_parse (ctx, &n_opts, &parse, &error))
      {
        list_error (a, "%s", error->message);
        return FALSE;
      }
    for (i = 0; i < n_opts; i++)
      g_ptr_array_add (a->rest, g_strdup (parse[i]));
  }
  return TRUE;
}

/* The images: each --image, then each line of --images FILE (blank lines
 * and '#' comments skipped), and in @origins where each was given.
 * NULL after an error naming the file and line. */
static GPtrArray *
list_images (ListArgs *a, GPtrArray *origins)
{
  g_autoptr (GPtrArray) images = g_ptr_array_new_with_free_func (g_free);

  for (guint i = 0; a->image_opts && a->image_opts[i]; i++)
    {
      g_ptr_array_add (images, g_strstrip (g_strdup (a->image_opts[i])));
      g_ptr_array_add (origins, g_strdup_printf ("--image %u", i + 1));
    }
  if (a->images_file)
    {
      g_autofree char *contents = NULL;
      g_autoptr (GError) error = NULL;
      g_auto (GStrv) lines = NULL;

      if (!g_file_get_contents (a->images_file, &contents, NULL, &error))
        {
          list_error (a, "--images: %s", error->message);
          return NULL;
        }
      if (!g_utf8_validate (contents, -1, NULL))
        {
          list_error (a, "--images: '%s' is not UTF-8 text", a->images_file);
          return NULL;
        }
      lines = g_strsplit (contents, "\n", -1);
      for (guint i = 0; lines[i]; i++)
        {
          char *line = g_strstrip (lines[i]);

          if (!*line || *line == '#')
            continue;
          g_ptr_array_add (images, g_strdup (line));
          g_ptr_array_add (origins, g_strdup_printf ("%s line %u", a->images_file, i + 1));
        }
    }
  for (guint i = 0; i < images->len; i++)
    {
      if (!*(const char *) images->pdata[i])
        {
          list_error (a, "%s: an empty image reference", (const char *) origins->pdata[i]);
          return NULL;
        }
      for (guint j = 0; j < i; j++)
        if (g_str_equal (images->pdata[i], images->pdata[j]))
          {
            list_error (a, "%s: '%s' is already in the list (%s)", (const char *) origins->pdata[i],
                        (const char *) images->pdata[i], (const char *) origins->pdata[j]);
            return NULL;
          }
    }
  if (images->len == 0 && a->images_file)
    {
      list_error (a, "--images: '%s' lists no image", a->images_file);
      return NULL;
    }
  return g_steal_pointer (&images);
}

/* DIR/NN-NAME/ for image @index (from 1) of @n: NN its place in the list,
 * NAME the last part of its reference, in characters a path keeps. */
static char *
image_out_dir (const char *out_dir, guint index, guint n, const char *reference)
{
  const char *name = strrchr (reference, '/');
  g_autoptr (GString) dir = g_string_new (NULL);

  name = name && name[1] ? name + 1 : reference;
  g_string_printf (dir, "%0*u-", n >= 100 ? 3 : 2, index);
  for (const char *c = name; *c && dir->len < 64; c++)
    g_string_append_c (dir, g_ascii_isalnum (*c) || *c == '.' || *c == '-' || *c == '_' ? *c : '_');
  return g_build_filename (out_dir, dir->str, NULL);
}

/* Every image opened and resolved on every arch asked (its command found)
 * before the first boots: a typo in the tenth reference is found at once,
 * not after nine gates.  Each gate resolves its image again, as a gate of
 * one does.  Returns the exit status of the first error, or OK. */
static int
list_check_images (ListArgs *a, GPtrArray *images, GPtrArray *origins,
                   const gboolean arches[AIRLOCK_N_ARCHES])
{
  const GPtrArray *workload = a->workload;
  g_autoptr (GPtrArray) args = g_ptr_array_new ();

  for (guint i = 1; i < workload->len; i++)
    g_ptr_array_add (args, workload->pdata[i]);
  g_ptr_array_add (args, NULL);
  for (guint i = 0; i < images->len; i++)
    {
      const char *ref = images->pdata[i];
      g_autoptr (GError) error = NULL;
      g_autoptr (AirlockImageSource) source = airlock_image_source_open (ref, &error);

      if (!source)
        {
          list_error (a, "image %u of %u (%s): %s", i + 1, images->len,
                      (const char *) origins->pdata[i], error->message);
          return harness_exit_for_image_error (error);
        }
      for (unsigned k = 0; k < AIRLOCK_N_ARCHES; k++)
        {
          if (arches[k]
              && !harness_image_runs_on (source, (AirlockArch) k,
                                         args->len > 1 ? (const char *const *) args->pdata : NULL,
                                         &error))
            {
              list_error (a, "image %u of %u (%s): %s: %s", i + 1, images->len,
                          (const char *) origins->pdata[i],
                          airlock_arch_to_string ((AirlockArch) k), error->message);
              return harness_exit_for_image_error (error);
            }
        }
    }
  return HARNESS_EXIT_OK;
}

/* A gate over several images as it goes: the list, and what each image
 * came to once its gate ended. */
typedef struct {
  GPtrArray *images;      /* char *: the references, in list order */
  GPtrArray *origins;     /* char *: where each was given */
  GPtrArray *dirs;        /* char *: each one's DIR/NN-NAME, or NULL without --out */
  int *statuses;          /* each one's exit status */
  RunListItem *items;     /* each one's verdicts; .ran FALSE for one not gated */
  gboolean ran;           /* every input checked, the first gate begun */
} ListRun;

static void
list_run_clear (ListRun *l)
{
  g_clear_pointer (&l->images, g_ptr_array_unref);
  g_clear_pointer (&l->origins, g_ptr_array_unref);
  g_clear_pointer (&l->dirs, g_ptr_array_unref);
  g_clear_pointer (&l->statuses, g_free);
  g_clear_pointer (&l->items, g_free);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (ListRun, list_run_clear)

/* The list's verdict: inconclusive when an image's is (or it has none),
 * else fail when one failed, else pass; NULL before any gate ran. */
static const char *
list_verdict (const ListRun *l)
{
  gboolean failed = FALSE;

  if (!l->ran)
    return NULL;
  for (guint i = 0; i < l->images->len; i++)
    {
      if (!l->items[i].verdict || g_str_equal (l->items[i].verdict, "inconclusive"))
        return "inconclusive";
      failed = failed || g_str_equal (l->items[i].verdict, "fail");
    }
  return failed ? "fail" : "pass";
}

/* The last line under --json, whatever happened once the options parsed. */
static void
list_json_summary (const ListArgs *a, const ListRun *l, int status)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  airlock_json_set_str (b, "type", "summary");
  airlock_json_set_str (b, "command", "gate");
  airlock_json_set_int (b, "exit_status", status);
  airlock_json_set_str (b, "verdict", list_verdict (l));
  g_ptr_array_add (a->errors, NULL);
  airlock_json_set_strv (b, "errors", (const char *const *) a->errors->pdata);
  g_ptr_array_remove_index (a->errors, a->errors->len - 1);
  json_builder_set_member_name (b, "images");
  json_builder_begin_array (b);
  for (guint i = 0; l->images && i < l->images->len; i++)
    {
      gboolean ran = l->items && l->items[i].ran;

      json_builder_begin_object (b);
      airlock_json_set_str (b, "reference", l->images->pdata[i]);
      json_builder_set_member_name (b, "exit_status");
      if (l->statuses && (ran || l->statuses[i] != HARNESS_EXIT_OK))
        json_builder_add_int_value (b, l->statuses[i]);
      else
        json_builder_add_null_value (b);
      airlock_json_set_str (b, "verdict", ran ? l->items[i].verdict : NULL);
      airlock_json_set_str (b, "out", l->dirs && i < l->dirs->len ? l->dirs->pdata[i] : NULL);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
  harness_print_json_line (b);
}

static int list_main (ListArgs *a, ListRun *l);

/* `airlock gate` over the images of --image (given more than once) and
 * --images FILE: one gate per image, in list order. */
static int
gate_list (int argc, char **argv)
{
  g_auto (ListArgs) a = { NULL };
  g_auto (ListRun) l = { NULL };
  int status;

  if (!list_args_parse (argc, argv, &a))
    return HARNESS_EXIT_USAGE;
  l.origins = g_ptr_array_new_with_free_func (g_free);
  l.dirs = g_ptr_array_new_with_free_func (g_free);
  l.images = list_images (&a, l.origins);
  /* One --image (or none: the gate says it wants one): the gate of one. */
  if (l.images && l.images->len <= 1 && !a.images_file)
    return run_command (argc, argv, gate_report);
  status = l.images ? list_main (&a, &l) : HARNESS_EXIT_USAGE;
  if (a.json)
    list_json_summary (&a, &l, status);
  return status;
}

/* How many images gate at once: one, unless a pool of hypervisors
 * (--connect more than once, or $AIRLOCK_CONNECT's list) has slots for
 * more than one image's arches at a time; then as many as it has.  The
 * pool hands each run its host (lib/case/hosts.c, shared by the images of
 * this process), so the images never take more than the slots. */
static guint
list_jobs (const ListArgs *a, const gboolean *arches)
{
  guint hosts = a->connect ? g_strv_length (a->connect) : 0;
  guint per_image = 0, slots;

  if (!a->connect)
    {
      /* The list as the session reads it: words separated by spaces. */
      const char *list = g_getenv ("AIRLOCK_CONNECT");
      g_auto (GStrv) words = g_strsplit_set (list ? list : "", " \t\n", -1);

      for (guint k = 0; words[k]; k++)
        hosts += *words[k] ? 1 : 0;
    }
  for (unsigned k = 0; k < AIRLOCK_N_ARCHES; k++)
    per_image += arches[k] ? 1 : 0;
  if (hosts < 2 || per_image == 0)
    return 1;
  /* An invalid --host-slots: each image's gate refuses it. */
  slots = a->host_slots >= 1 && a->host_slots <= 64 ? (guint) a->host_slots : 1;
  return MAX (1u, hosts * slots / per_image);
}

/* The gate of image @i of the list, its arguments made from the list's. */
static int
list_gate_one (ListArgs *a, ListRun *l, guint i, GString *junit)
{
  g_autoptr (GPtrArray) args = g_ptr_array_new_with_free_func (g_free);
  g_autofree char **argv = NULL;
  RunListItem *item = &l->items[i];

  for (guint j = 0; j < a->rest->len; j++)
    g_ptr_array_add (args, g_strdup (a->rest->pdata[j]));
  g_ptr_array_add (args, g_strdup_printf ("--image=%s", (const char *) l->images->pdata[i]));
  if (a->arch_spec)
    g_ptr_array_add (args, g_strdup_printf ("--arch=%s", a->arch_spec));
  if (a->stdin_file)
    g_ptr_array_add (args, g_strdup_printf ("--stdin=%s", a->stdin_file));
  for (guint j = 0; a->connect && a->connect[j]; j++)
    g_ptr_array_add (args, g_strdup_printf ("--connect=%s", a->connect[j]));
  if (a->host_slots != G_MININT)
    g_ptr_array_add (args, g_strdup_printf ("--host-slots=%d", a->host_slots));
  if (l->dirs->pdata[i])
    g_ptr_array_add (args, g_strdup_printf ("--out=%s", (const char *) l->dirs->pdata[i]));
  if (a->json)
    g_ptr_array_add (args, g_strdup ("--json"));
  for (guint j = 0; j < a->workload->len; j++)
    g_ptr_array_add (args, g_strdup (a->workload->pdata[j]));
  g_ptr_array_add (args, NULL);
  /* Option parsing takes the options out of the argv it is given (and
   * frees none): it gets a copy of the array, @args keeps every string. */
  argv = g_memdup2 (args->pdata, args->len * sizeof (char *));

  item->junit = a->junit ? junit : NULL;
  return run_command_item ((int) args->len - 1, argv, gate_report, item);
}

/* The images gating at once: each worker takes the next image; its output
 * is kept in buffers of its own and printed whole when it ends, so the
 * images' reports (and --json's lines) never interleave. */
typedef struct {
  ListArgs *a;
  ListRun *l;
  GString **junits;       /* each image's <testsuite>, joined in list order at the end */
  GMutex lock;
  guint next;
  gboolean stop;          /* the first gate refused the options every image shares */
  gboolean buffered;
} ListWork;

static void
list_print_end (ListWork *w, guint i)
{
  fprintf (stderr, "airlock gate: image %u of %u: %s: %s (exit %d)\n", i + 1, w->l->images->len,
           (const char *) w->l->images->pdata[i],
           w->l->items[i].verdict ? w->l->items[i].verdict : "no verdict", w->l->statuses[i]);
  fflush (stderr);
}

static gpointer
list_worker (gpointer data)
{
  ListWork *w = data;

  for (;;)
    {
      char *out_text = NULL, *err_text = NULL;
      size_t out_len = 0, err_len = 0;
      FILE *out = NULL, *err = NULL;
      guint i;

      g_mutex_lock (&w->lock);
      if (w->stop || w->next >= w->l->images->len)
        {
          g_mutex_unlock (&w->lock);
          return NULL;
        }
      i = w->next++;
      fprintf (stderr, "airlock gate: image %u of %u: %s\n", i + 1, w->l->images->len,
               (const char *) w->l->images->pdata[i]);
      fflush (stderr);
      g_mutex_unlock (&w->lock);

      if (w->buffered)
        {
          out = open_memstream (&out_text, &out_len);
          err = open_memstream (&err_text, &err_len);
          if (!out || !err)
            g_error ("cannot buffer the output of image %u: out of memory", i + 1);
          harness_set_thread_output (out, err);
        }
      w->l->statuses[i] = list_gate_one (w->a, w->l, i, w->junits[i]);
      if (w->buffered)
        {
          harness_set_thread_output (NULL, NULL);
          fclose (out);
          fclose (err);
        }

      g_mutex_lock (&w->lock);
      if (w->buffered)
        {
          fwrite (err_text, 1, err_len, stderr);
          fflush (stderr);
          fwrite (out_text, 1, out_len, stdout);
          fflush (stdout);
        }
      list_print_end (w, i);
      /* The first gate refused the options every image shares (a policy
       * that does not parse, a --serve file missing): nothing ran, and
       * nothing else would. */
      if (i == 0 && !w->l->items[i].ran && w->l->statuses[i] == HARNESS_EXIT_USAGE)
        w->stop = TRUE;
      g_mutex_unlock (&w->lock);
      free (out_text);
      free (err_text);
    }
}

/* Every image's gate, @jobs at once; their JUnit testsuites appended to
 * @suites in list order.  Returns the highest exit status; l->ran FALSE
 * when the first gate refused the options (then only its status). */
static int
list_gate_all (ListArgs *a, ListRun *l, guint jobs, GString *suites)
{
  ListWork w = { .a = a, .l = l, .buffered = jobs > 1 };
  g_autoptr (GPtrArray) threads = g_ptr_array_new ();
  int status = HARNESS_EXIT_OK;

  jobs = MIN (jobs, l->images->len);
  w.junits = g_new0 (GString *, l->images->len);
  for (guint i = 0; i < l->images->len; i++)
    w.junits[i] = g_string_new (NULL);
  g_mutex_init (&w.lock);
  if (jobs > 1)
    fprintf (stderr, "airlock gate: %u images, %u at once over the pool of hypervisors\n",
             l->images->len, jobs);
  if (jobs <= 1)
    list_worker (&w);
  else
    for (guint j = 0; j < jobs; j++)
      g_ptr_array_add (threads, g_thread_new ("airlock-image", list_worker, &w));
  for (guint j = 0; j < threads->len; j++)
    g_thread_join (threads->pdata[j]);
  g_mutex_clear (&w.lock);

  for (guint i = 0; i < l->images->len; i++)
    {
      g_string_append_len (suites, w.junits[i]->str, (gssize) w.junits[i]->len);
      g_string_free (w.junits[i], TRUE);
      status = MAX (status, l->statuses[i]);
    }
  g_free (w.junits);
  if (w.stop)
    {
      l->ran = FALSE;
      return l->statuses[0];
    }
  return status;
}

static int
list_main (ListArgs *a, ListRun *l)
{
  GPtrArray *images = l->images;
  g_autoptr (GString) suites = g_string_new (NULL);
  g_autoptr (GError) error = NULL;
  gboolean arches[AIRLOCK_N_ARCHES];
  guint tests = 0, failures = 0, errors = 0;
  int status = HARNESS_EXIT_OK;
  FILE *text;
  Table t;
  static const char *const header[] = { "image", "amd64", "arm64", "exit", "bundles", NULL };

  if (!harness_parse_arches (a->arch_spec ? a->arch_spec : "all", arches, &error))
    {
      list_error (a, "%s", error->message);
      return HARNESS_EXIT_USAGE;
    }
  if (a->stdin_file && g_str_equal (a->stdin_file, "-"))
    {
      list_error (a, "--stdin - streams one input: it cannot feed %u images (give a file, which "
                  "each gets whole)", images->len);
      return HARNESS_EXIT_USAGE;
    }
  if (a->junit)
    {
      g_autofree char *parent = g_path_get_dirname (a->junit);

      if (!g_file_test (parent, G_FILE_TEST_IS_DIR))
        {
          list_error (a, "--junit: '%s' is not a directory to write '%s' in", parent, a->junit);
          return HARNESS_EXIT_USAGE;
        }
    }
  for (guint i = 0; i < images->len; i++)
    g_ptr_array_add (l->dirs, a->out_dir ? image_out_dir (a->out_dir, i + 1, images->len,
                                                         images->pdata[i]) : NULL);
  for (guint i = 0; i < images->len; i++)
    {
      const char *dir = l->dirs->pdata[i];

      /* Refused before any run, as a gate of one refuses DIR/ARCH. */
      if (dir && g_file_test (dir, G_FILE_TEST_EXISTS | G_FILE_TEST_IS_SYMLINK))
        {
          list_error (a, "'%s' exists; a bundle is never overwritten", dir);
          return HARNESS_EXIT_USAGE;
        }
    }
  if ((status = list_check_images (a, images, l->origins, arches)) != HARNESS_EXIT_OK)
    return status;

  l->statuses = g_new0 (int, images->len);
  l->items = g_new0 (RunListItem, images->len);
  l->ran = TRUE;
  status = list_gate_all (a, l, list_jobs (a, arches), suites);
  if (!l->ran)
    return status;

  /* The table of images: what each arch came to, and where its bundles are. */
  text = a->json ? stderr : stdout;
  table_init (&t, header);
  for (guint i = 0; i < images->len; i++)
    {
      char *cells[5];   /* table_add() takes the strings, not the array */

      cells[0] = g_strdup (images->pdata[i]);
      for (unsigned k = 0; k < AIRLOCK_N_ARCHES; k++)
        cells[1 + k] = g_strdup (!arches[k] ? NULL
                                 : l->items[i].arch_verdicts[k] ? l->items[i].arch_verdicts[k]
                                 : "inconclusive");
      cells[3] = g_strdup_printf ("%d", l->statuses[i]);
      cells[4] = g_strdup (l->dirs->pdata[i]);
      table_add (&t, cells);
    }
  fprintf (text, "\nimages\n");
  table_fprint (&t, text, "  ");
  fflush (text);
  if (a->junit)
    {
      for (guint i = 0; i < images->len; i++)
        {
          tests += l->items[i].junit_tests;
          failures += l->items[i].junit_failures;
          errors += l->items[i].junit_errors;
        }
      if (!run_report_write_junit_suites (a->junit, suites, tests, failures, errors, &error))
        {
          list_error (a, "%s", error->message);
          status = MAX (status, HARNESS_EXIT_SETUP);
        }
    }
  return status;
}

/* The gate's table: one row per arch, then every reason. */
static int
gate_report (RunReport *r)
{
  const gboolean *arches = r->arches;
  static const char *const header[] = {
    "arch", "controls", "attempts", "admitted", "denied", "unattributed", "ended", "verdict", NULL,
  };
  Table t;
  int status = HARNESS_EXIT_OK;

  table_init (&t, header);
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    {
      const AirlockVerdict *v = r->results[a]
                                    ? airlock_result_get_verdict_details (r->results[a])
                                    : NULL;
      char *cells[8];

      if (!arches[a])
        continue;
      cells[0] = g_strdup (airlock_arch_to_string ((AirlockArch) a));
      if (!v)
        {
          /* The run never reached a verdict (setup, image error). */
          cells[1] = cells[2] = cells[3] = cells[4] = cells[5] = cells[6] = NULL;
          cells[7] = g_strdup ("inconclusive");
          status = MAX (status, HARNESS_EXIT_INCONCLUSIVE);
          table_add (&t, cells);
          continue;
        }
      cells[1] = g_strdup_printf ("%u/%u", v->n_controls_ok, v->controls->len);
      cells[2] = g_strdup_printf ("%u", v->n_attempts);
      cells[3] = g_strdup_printf ("%u", v->n_admitted);
      cells[4] = g_strdup_printf ("%u", v->n_denied);
      cells[5] = g_strdup_printf ("%u", v->n_unattributed);
      /* How the observation ended: a run cut by the time limit did not see
       * what the workload does later, and the table must say so. */
      cells[6] = g_strdup (v->ended_by_time_limit ? "time limit" : v->observation ? "exited" : "-");
      /* A verdict whose bundle could not be written (the disk filled up)
       * cannot be shown to anyone: the gate must not print it as a pass
       * or a fail it cannot back.  finish_case() already made the exit
       * status 4; the reason is printed below. */
      if (airlock_result_get_bundle_error (r->results[a]))
        cells[7] = g_strdup ("inconclusive");
      else
        cells[7] = g_strdup (airlock_verdict_kind_to_string (v->kind));
      table_add (&t, cells);
      if (v->kind == AIRLOCK_VERDICT_INCONCLUSIVE || airlock_result_get_bundle_error (r->results[a]))
        status = MAX (status, HARNESS_EXIT_INCONCLUSIVE);
      else if (v->kind == AIRLOCK_VERDICT_FAIL && status == HARNESS_EXIT_OK)
        status = HARNESS_EXIT_FAIL;
    }
  /* Under --json the table is for the person watching stderr; the
   * verdict lines and the summary carry it on stdout. */
  fprintf (r->text, "\nverdict\n");
  table_fprint (&t, r->text, "  ");
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    {
      AirlockResult *res = r->results[a];
      const AirlockVerdict *v = res ? airlock_result_get_verdict_details (res) : NULL;
      const char *arch_name = airlock_arch_to_string ((AirlockArch) a);

      if (!arches[a] || !v)
        continue;
      if (airlock_result_get_manifest_digest (res))
        fprintf (r->text, "%s: bound to manifest %s\n", arch_name,
                 airlock_result_get_manifest_digest (res));
      /* Which host of a pool produced this bundle (its manifest says so
       * too), and one that failed it first. */
      if (airlock_result_get_lost_attempt (res))
        fprintf (r->text, "%s: hypervisor %s, after the first was lost mid-run (%s); its "
                 "inconclusive bundle is kept in %s\n",
                 arch_name, airlock_result_get_hypervisor (res),
                 airlock_result_get_host_failure (res), airlock_result_get_lost_attempt (res));
      else if (airlock_result_get_host_failure (res))
        fprintf (r->text, "%s: hypervisor %s, after the first failed to start it (%s)\n",
                 arch_name, airlock_result_get_hypervisor (res),
                 airlock_result_get_host_failure (res));
      else if (r->pool)
        fprintf (r->text, "%s: hypervisor %s\n", arch_name, airlock_result_get_hypervisor (res));
      if (airlock_result_get_retry_error (res))
        fprintf (r->text, "%s: lost with its host, and not made again on %s\n", arch_name,
                 airlock_result_get_retry_error (res));
      if (airlock_result_get_bundle_error (res))
        fprintf (r->text, "%s: the evidence bundle '%s' could not be written: %s; a verdict "
                 "without its evidence does not count\n",
                 arch_name, airlock_result_get_bundle_dir (res), airlock_result_get_bundle_error (res));
      if (v->observation)
        fprintf (r->text, "%s: %s\n", arch_name, v->observation);
      for (guint i = 0; i < v->reasons->len; i++)
        fprintf (r->text, "%s: %s\n", arch_name, (const char *) v->reasons->pdata[i]);
    }
  fflush (r->text);
  if (r->json)
    run_report_json_verdicts (r);
  return status;
}
