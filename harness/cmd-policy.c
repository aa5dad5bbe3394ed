/* airlock policy suggest BUNDLE…: the policy file that admits what some
 * evidence bundles recorded (lib/bundle/policy-suggest.c), to start a
 * project's policy from a run of its image rather than from a blank page. */
#include "config.h"

#include "harness.h"

#include <stdio.h>
#include <string.h>

/* Reads @dir (a bundle, or a directory of ARCH/ bundles) into @views.
 * FALSE, having said why on stderr, when it holds no readable bundle. */
static gboolean
read_views (const char *dir, GPtrArray *views)
{
  guint found = 0;

  if (harness_is_bundle (dir))
    {
      AirlockBundleView *v = airlock_bundle_read (dir, 0);

      if (!v->has_manifest)
        {
          fprintf (stderr, "airlock policy suggest: '%s' has no readable manifest.json: not a "
                   "bundle to learn from\n", dir);
          airlock_bundle_view_free (v);
          return FALSE;
        }
      g_ptr_array_add (views, v);
      return TRUE;
    }
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    {
      g_autofree char *sub = g_build_filename (dir, airlock_arch_to_string ((AirlockArch) a), NULL);

      if (!g_file_test (sub, G_FILE_TEST_IS_DIR))
        continue;
      found++;
      if (!read_views (sub, views))
        return FALSE;
    }
  if (!found)
    fprintf (stderr, "airlock policy suggest: '%s' is not a bundle (no manifest.json) and holds "
             "no amd64/ or arm64/ bundle\n", dir);
  return found > 0;
}

static int
cmd_policy_suggest (int argc, char **argv)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GOptionContext) ctx = g_option_context_new (
      "BUNDLE_DIR… - print the policy that admits exactly the egress these bundles recorded");
  g_autofree char *out_path = NULL;
  g_autofree char *arch_spec = NULL;
  gboolean arches[AIRLOCK_N_ARCHES];
  GOptionEntry entries[] = {
    { "arch", 'a', 0, G_OPTION_ARG_STRING, &arch_spec,
      "learn only from the bundles of these arches: amd64, arm64, all (the default) or a comma list",
      "ARCH" },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &out_path,
      "write the policy to FILE (created; never overwritten) instead of stdout", "FILE" },
    { NULL },
  };
  g_autoptr (GPtrArray) views = g_ptr_array_new_with_free_func ((GDestroyNotify) airlock_bundle_view_free);
  g_autofree char *text = NULL;

  g_option_context_add_main_entries (ctx, entries, NULL);
  g_option_context_set_description (
      ctx, "BUNDLE_DIR is a bundle ('airlock run|gate --out DIR': DIR/amd64, DIR/arm64), or a\n"
           "directory holding amd64/ and arm64/ bundles; give several to merge runs.  One rule\n"
           "per kind of attempt, merged over the bundles, each under comments naming the arch,\n"
           "the process, the call and the DNS and host names it came from.  A connection to an\n"
           "address the sinkhole handed out for a name is admitted by that name (host=), a DNS\n"
           "query by the resolver and the name asked (dns=), the rest by address; exe= names\n"
           "the executable.  What no policy can admit (denied escapes, unattributed flows) is\n"
           "listed in comments.  The bundles are read, not checked: 'airlock verify' them first.\n\n"
           "Give the output to 'airlock gate --policy FILE'.\n\n"
           "Exit status: 0 written, 1 a directory with no readable bundle, 2 usage.");
  if (!g_option_context_parse (ctx, &argc, &argv, &error))
    {
      fprintf (stderr, "airlock policy suggest: %s\n", error->message);
      return HARNESS_EXIT_USAGE;
    }
  if (argc < 2)
    {
      fprintf (stderr, "airlock policy suggest: give a bundle directory (or one holding ARCH/ bundles)\n");
      return HARNESS_EXIT_USAGE;
    }
  for (int i = 1; i < argc; i++)
    if (!g_file_test (argv[i], G_FILE_TEST_IS_DIR))
      {
        fprintf (stderr, "airlock policy suggest: '%s' is not a directory\n", argv[i]);
        return HARNESS_EXIT_USAGE;
      }
  if (!harness_parse_arches (arch_spec ? arch_spec : "all", arches, &error))
    {
      fprintf (stderr, "airlock policy suggest: %s\n", error->message);
      return HARNESS_EXIT_USAGE;
    }
  for (int i = 1; i < argc; i++)
    if (!read_views (argv[i], views))
      return HARNESS_EXIT_FAIL;
  /* --arch: a bundle whose manifest names an arch not selected is left
   * out (one naming none is kept: nothing says it is another arch's). */
  for (guint i = views->len; i-- > 0;)
    {
      const AirlockBundleView *v = views->pdata[i];
      AirlockArch a;

      if (v->arch && airlock_arch_from_string (v->arch, &a) && !arches[a])
        g_ptr_array_remove_index (views, i);
    }
  if (views->len == 0)
    {
      fprintf (stderr, "airlock policy suggest: no bundle of arch %s among those given\n", arch_spec);
      return HARNESS_EXIT_FAIL;
    }
  text = airlock_policy_suggest (views);
  if (out_path)
    {
      g_autoptr (GFile) file = g_file_new_for_path (out_path);
      g_autoptr (GFileOutputStream) out = g_file_create (file, G_FILE_CREATE_NONE, NULL, &error);

      if (!out || !g_output_stream_write_all (G_OUTPUT_STREAM (out), text, strlen (text), NULL,
                                              NULL, &error)
          || !g_output_stream_close (G_OUTPUT_STREAM (out), NULL, &error))
        {
          fprintf (stderr, "airlock policy suggest: cannot write '%s': %s\n", out_path,
                   error->message);
          return HARNESS_EXIT_FAIL;
        }
      return HARNESS_EXIT_OK;
    }
  fputs (text, stdout);
  return HARNESS_EXIT_OK;
}

int
cmd_policy (int argc, char **argv)
{
  if (argc >= 2 && g_str_equal (argv[1], "suggest"))
    return cmd_policy_suggest (argc - 1, argv + 1);
  if (argc >= 2 && (g_str_equal (argv[1], "--help") || g_str_equal (argv[1], "-h")))
    {
      printf ("Usage:\n  airlock policy suggest BUNDLE_DIR… [--arch ARCH] [--output FILE]\n\n"
              "Subcommands:\n"
              "  suggest              print the policy that admits exactly the egress some bundles\n"
              "                       recorded ('airlock policy suggest --help' says how)\n\n"
              "Options of suggest:\n"
              "  -a, --arch=ARCH      learn only from these arches' bundles (amd64, arm64, all, a list)\n"
              "  -o, --output=FILE    write the policy to FILE (created; never overwritten)\n");
      return HARNESS_EXIT_OK;
    }
  fprintf (stderr, "airlock policy: give a subcommand: suggest BUNDLE_DIR…\n");
  return HARNESS_EXIT_USAGE;
}
