/* airlock images: build or inspect the guest images (kernel + initramfs per
 * arch) that every boot uses. */
#include "config.h"

#include "harness.h"

#include "guestimg/bzimage-private.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  char *arch_spec;
  gboolean force;
  char *kernel;
  char *modules;
  char *cache_dir;
} ImagesArgs;

static void
images_args_clear (ImagesArgs *args)
{
  g_free (args->arch_spec);
  g_free (args->kernel);
  g_free (args->modules);
  g_free (args->cache_dir);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (ImagesArgs, images_args_clear)

static JsonNode *
member_of (JsonNode *node, const char *name)
{
  return node && JSON_NODE_HOLDS_OBJECT (node) ? json_object_get_member (json_node_get_object (node), name)
                                               : NULL;
}

/* A JSON array of strings, or of objects with a "name", as one line. */
static char *
names_of (JsonNode *node)
{
  g_autoptr (GString) names = g_string_new (NULL);
  JsonArray *array = node && JSON_NODE_HOLDS_ARRAY (node) ? json_node_get_array (node) : NULL;

  for (guint i = 0; array && i < json_array_get_length (array); i++)
    {
      JsonNode *e = json_array_get_element (array, i);
      JsonNode *name = JSON_NODE_HOLDS_OBJECT (e) ? member_of (e, "name") : e;

      if (name && JSON_NODE_HOLDS_VALUE (name) && json_node_get_value_type (name) == G_TYPE_STRING)
        g_string_append_printf (names, "%s%s", names->len ? " " : "", json_node_get_string (name));
    }
  return g_string_free (g_steal_pointer (&names), FALSE);
}

/* What the manifest says beyond AirlockGuestImage: how the kernel was
 * obtained and which modules the initramfs carries. */
static void
print_manifest_details (const char *manifest_path)
{
  g_autoptr (JsonParser) parser = json_parser_new ();
  JsonNode *outputs, *how;
  g_autofree char *modules = NULL;
  g_autofree char *builtin = NULL;

  if (!json_parser_load_from_file (parser, manifest_path, NULL))
    return;
  outputs = member_of (json_parser_get_root (parser), "outputs");
  how = member_of (member_of (outputs, "kernel"), "how");
  if (how && JSON_NODE_HOLDS_VALUE (how) && json_node_get_value_type (how) == G_TYPE_STRING)
    printf ("  %-17s %s\n", "kernel format", json_node_get_string (how));
  modules = names_of (member_of (outputs, "modules"));
  builtin = names_of (member_of (outputs, "builtin_modules"));
  printf ("  %-17s %s\n", "modules", *modules ? modules : "(none)");
  if (*builtin)
    printf ("  %-17s %s\n", "built in", builtin);
}

static void
print_image (const AirlockGuestImage *image, const char *status)
{
  g_autofree char *size = NULL;
  GStatBuf st;

  printf ("%s: %s\n", airlock_arch_to_string (image->arch), status);
  printf ("  %-17s %s\n", "kernel", image->kernel_path);
  printf ("  %-17s %s\n", "kernel release", image->kernel_release);
  printf ("  %-17s %s\n", "kernel source", image->kernel_source);
  printf ("  %-17s %s\n", "kernel sha256", image->kernel_sha256);
  printf ("  %-17s %s\n", "initramfs", image->initramfs_path);
  if (g_stat (image->initramfs_path, &st) == 0)
    {
      size = g_format_size (st.st_size);
      printf ("  %-17s %" G_GINT64_FORMAT " bytes (%s)\n", "initramfs size", (gint64) st.st_size,
              size);
    }
  printf ("  %-17s %s\n", "initramfs sha256", image->initramfs_sha256);
  print_manifest_details (image->manifest_path);
  printf ("  %-17s %s\n", "manifest", image->manifest_path);
}

typedef struct {
  gboolean built;   /* a stage other than waiting for another builder ran */
} BuildWatch;

static void
build_progress (const char *stage, guint64 done, guint64 total, gpointer user_data)
{
  BuildWatch *watch = user_data;

  if (!g_str_has_prefix (stage, "wait "))
    watch->built = TRUE;
  harness_progress (stage, done, total, NULL);
}

static gboolean
build_one (AirlockArch arch, const ImagesArgs *args)
{
  BuildWatch watch = { FALSE };
  AirlockGuestImageOptions opts = {
    .cache_dir = args->cache_dir,
    .kernel_path = args->kernel,
    .modules_dir = args->modules,
    .force = args->force,
    .progress = build_progress,
    .progress_data = &watch,
  };
  g_autoptr (AirlockGuestImage) image = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *status = NULL;
  gint64 start = g_get_monotonic_time ();

  /* Look first, so the report can say whether it was built now. */
  if (!args->force)
    {
      opts.offline = TRUE;
      image = airlock_guest_image_ensure (arch, &opts, &error);
      if (!image && !g_error_matches (error, AIRLOCK_GUEST_IMAGE_ERROR,
                                      AIRLOCK_GUEST_IMAGE_ERROR_NOT_BUILT))
        {
          fprintf (stderr, "airlock: %s: %s\n", airlock_arch_to_string (arch), error->message);
          return FALSE;
        }
      if (image)
        status = g_strdup_printf ("cached (looked up in %.1f ms)",
                                  (g_get_monotonic_time () - start) / 1e3);
      g_clear_error (&error);
      opts.offline = FALSE;
    }
  if (!image)
    {
      image = airlock_guest_image_ensure (arch, &opts, &error);
      harness_progress_done ();
      if (!image)
        {
          fprintf (stderr, "airlock: %s: %s\n", airlock_arch_to_string (arch), error->message);
          return FALSE;
        }
      /* Another airlock may have built it while this one waited. */
      status = watch.built
                 ? g_strdup_printf ("built in %.1f s", (g_get_monotonic_time () - start) / 1e6)
                 : g_strdup_printf ("cached (built by another airlock meanwhile; waited %.1f s)",
                                    (g_get_monotonic_time () - start) / 1e6);
    }
  print_image (image, status);
  return TRUE;
}

static gboolean
show_one (AirlockArch arch, const ImagesArgs *args)
{
  AirlockGuestImageOptions opts = {
    .cache_dir = args->cache_dir,
    .kernel_path = args->kernel,
    .modules_dir = args->modules,
    .offline = TRUE,
  };
  g_autoptr (AirlockGuestImage) image = NULL;
  g_autoptr (GError) error = NULL;

  image = airlock_guest_image_ensure (arch, &opts, &error);
  if (!image)
    {
      if (g_error_matches (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_NOT_BUILT))
        printf ("%s: not built\n  %s\n", airlock_arch_to_string (arch), error->message);
      else
        fprintf (stderr, "airlock: %s: %s\n", airlock_arch_to_string (arch), error->message);
      return FALSE;
    }
  print_image (image, "cached");
  return TRUE;
}

/* With --kernel and no --arch, the kernel file says which arch it is for. */
static gboolean
arch_of_kernel (const char *path, AirlockArch *ret_arch, GError **error)
{
  g_autoptr (GMappedFile) mapped = g_mapped_file_new (path, FALSE, error);

  if (!mapped)
    return FALSE;
  if (!airlock_kernel_guess_arch ((const guint8 *) g_mapped_file_get_contents (mapped),
                                  g_mapped_file_get_length (mapped), ret_arch))
    {
      g_set_error (error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                   "cannot tell which arch kernel '%s' is for: pass --arch", path);
      return FALSE;
    }
  return TRUE;
}

int
cmd_images (int argc, char **argv)
{
  g_auto (ImagesArgs) args = { NULL };
  const GOptionEntry entries[] = {
    { "arch", 'a', 0, G_OPTION_ARG_STRING, &args.arch_spec,
      "Guest arch: amd64, arm64 or all (default: all, or the --kernel's arch)", "ARCH" },
    { "force", 'f', 0, G_OPTION_ARG_NONE, &args.force,
      "build: rebuild even when a cached image matches", NULL },
    { "kernel", 'k', 0, G_OPTION_ARG_FILENAME, &args.kernel,
      "Use this kernel (bzImage, vmlinux or arm64 Image) instead of the pinned Debian one", "PATH" },
    { "modules", 'm', 0, G_OPTION_ARG_FILENAME, &args.modules,
      "The kernel's modules: its lib/modules/<release> directory", "DIR" },
    { "cache-dir", 0, 0, G_OPTION_ARG_FILENAME, &args.cache_dir,
      "Cache root (default: $AIRLOCK_CACHE_DIR, else $XDG_CACHE_HOME/airlock)", "DIR" },
    { NULL }
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("build|show");
  g_autoptr (GError) error = NULL;
  gboolean arches[AIRLOCK_N_ARCHES] = { FALSE };
  gboolean (*run) (AirlockArch, const ImagesArgs *) = NULL;
  gboolean ok = TRUE;
  const char *subcommand;

  g_option_context_set_summary (context,
    "  build   build the guest images that are not cached (downloads the pinned\n"
    "          kernel packages the first time)\n"
    "  show    print the cached guest images; exits 4 when one is not built");
  g_option_context_add_main_entries (context, entries, NULL);
  g_set_prgname ("airlock images");
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      fprintf (stderr, "airlock images: %s\n", error->message);
      return HARNESS_EXIT_USAGE;
    }
  if (argc != 2)
    {
      fprintf (stderr, "airlock images: expected one of 'build' or 'show' (see --help)\n");
      return HARNESS_EXIT_USAGE;
    }
  subcommand = argv[1];
  if (g_str_equal (subcommand, "build"))
    run = build_one;
  else if (g_str_equal (subcommand, "show"))
    run = show_one;
  else
    {
      fprintf (stderr, "airlock images: unknown subcommand '%s' (expected 'build' or 'show')\n",
               subcommand);
      return HARNESS_EXIT_USAGE;
    }
  if (args.force && run == show_one)
    {
      fprintf (stderr, "airlock images: --force only applies to 'build'\n");
      return HARNESS_EXIT_USAGE;
    }
  if (!args.kernel != !args.modules)
    {
      fprintf (stderr, "airlock images: --kernel and --modules go together "
                       "(a kernel and its lib/modules/<release> directory)\n");
      return HARNESS_EXIT_USAGE;
    }

  if (args.arch_spec)
    {
      if (!harness_parse_arches (args.arch_spec, arches, &error))
        {
          fprintf (stderr, "airlock images: %s\n", error->message);
          return HARNESS_EXIT_USAGE;
        }
    }
  else if (args.kernel)
    {
      AirlockArch arch;
      if (!arch_of_kernel (args.kernel, &arch, &error))
        {
          fprintf (stderr, "airlock images: %s\n", error->message);
          return HARNESS_EXIT_USAGE;
        }
      arches[arch] = TRUE;
    }
  else
    for (guint i = 0; i < AIRLOCK_N_ARCHES; i++)
      arches[i] = TRUE;

  if (args.kernel && arches[AIRLOCK_ARCH_AMD64] && arches[AIRLOCK_ARCH_ARM64])
    {
      fprintf (stderr, "airlock images: a --kernel is for one arch: pass --arch amd64 or --arch arm64\n");
      return HARNESS_EXIT_USAGE;
    }

  for (guint i = 0; i < AIRLOCK_N_ARCHES; i++)
    if (arches[i])
      ok = run ((AirlockArch) i, &args) && ok;
  return ok ? HARNESS_EXIT_OK : HARNESS_EXIT_SETUP;
}
