/* airlock images: build or show the guest images (kernel + initramfs per
 * arch) that every boot uses, and inspect a container image reference. */
#include "config.h"

#include "harness.h"


#include <errno.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  char *arch_spec;
  gboolean force;
  char *kernel;
  char *modules;
  char *kernel_dir;
  char *cache_dir;
  gboolean json;
} ImagesArgs;

static void
images_args_clear (ImagesArgs *args)
{
  g_free (args->arch_spec);
  g_free (args->kernel);
  g_free (args->modules);
  g_free (args->kernel_dir);
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
  g_autoptr (JsonNode) root = airlock_json_load_bounded (manifest_path, NULL, NULL);
  JsonNode *outputs, *how;
  g_autofree char *modules = NULL;
  g_autofree char *builtin = NULL;

  if (!root)
    return;
  outputs = member_of (root, "outputs");
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
  {
    g_autoptr (GError) error = NULL;
    AirlockKernelBpf bpf;

    printf ("  %-17s %s\n", "recorder hooks",
            airlock_guest_image_read_kernel_bpf (image, &bpf, &error)
              ? airlock_kernel_bpf_describe (bpf) : error->message);
  }
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
    .kernel_dir = args->kernel_dir,
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

/* ---- images inspect REF ------------------------------------------------- */

static void
add_strv_member (JsonBuilder *builder, const char *name, GStrv strv)
{
  json_builder_set_member_name (builder, name);
  if (!strv)
    {
      json_builder_add_null_value (builder);
      return;
    }
  json_builder_begin_array (builder);
  for (guint i = 0; strv[i]; i++)
    json_builder_add_string_value (builder, strv[i]);
  json_builder_end_array (builder);
}

static void
add_string_member (JsonBuilder *builder, const char *name, const char *value)
{
  json_builder_set_member_name (builder, name);
  if (value)
    json_builder_add_string_value (builder, value);
  else
    json_builder_add_null_value (builder);
}

static void
build_image_json (JsonBuilder *builder, const char *reference, const AirlockImage *image)
{
  json_builder_begin_object (builder);
  add_string_member (builder, "type", "image");
  add_string_member (builder, "reference", reference);
  add_string_member (builder, "arch", airlock_arch_to_string (image->arch));
  add_string_member (builder, "platform", image->platform);
  add_string_member (builder, "index_digest", image->index_digest);
  add_string_member (builder, "manifest_digest", image->manifest_digest);
  add_string_member (builder, "config_digest", image->config_digest);
  json_builder_set_member_name (builder, "layers");
  json_builder_begin_array (builder);
  for (guint i = 0; i < image->layers->len; i++)
    {
      const AirlockImageLayer *layer = image->layers->pdata[i];
      json_builder_begin_object (builder);
      add_string_member (builder, "digest", layer->digest);
      json_builder_set_member_name (builder, "size");
      json_builder_add_int_value (builder, layer->size);
      add_string_member (builder, "media_type", layer->media_type);
      add_string_member (builder, "compression",
                         airlock_layer_compression_to_string (layer->compression));
      json_builder_end_object (builder);
    }
  json_builder_end_array (builder);
  add_strv_member (builder, "entrypoint", image->entrypoint);
  add_strv_member (builder, "cmd", image->cmd);
  add_strv_member (builder, "env", image->env);
  add_string_member (builder, "working_dir", image->working_dir);
  add_string_member (builder, "user", image->user);
  json_builder_set_member_name (builder, "stop_signal");
  if (image->stop_signal)
    json_builder_add_int_value (builder, image->stop_signal);
  else
    json_builder_add_null_value (builder);
  json_builder_end_object (builder);
}

/* ["a", "b c"] as the JSON a Dockerfile would write; "(none)" for NULL. */
static char *
strv_line (GStrv strv)
{
  g_autoptr (JsonBuilder) builder = json_builder_new ();
  g_autoptr (JsonGenerator) generator = json_generator_new ();
  g_autoptr (JsonNode) root = NULL;

  if (!strv)
    return g_strdup ("(none)");
  json_builder_begin_array (builder);
  for (guint i = 0; strv[i]; i++)
    json_builder_add_string_value (builder, strv[i]);
  json_builder_end_array (builder);
  root = json_builder_get_root (builder);
  json_generator_set_root (generator, root);
  return json_generator_to_data (generator, NULL);
}

/* The image chose these strings: escaped, so an ESC sequence or a newline
 * in its Env, WorkingDir or User cannot rewrite or forge a line of ours
 * (Entrypoint and Cmd are shown as JSON, which escapes them). */
static void
print_field (const char *name, const char *value, const char *none)
{
  g_autofree char *shown = value ? g_strescape (value, NULL) : NULL;

  printf ("  %-12s %s\n", name, shown ? shown : none);
}

static void
print_inspected (const AirlockImage *image)
{
  g_autofree char *entrypoint = strv_line (image->entrypoint);
  g_autofree char *cmd = strv_line (image->cmd);
  g_autofree char *platform = g_strescape (image->platform, NULL);

  printf ("%s: %s\n", airlock_arch_to_string (image->arch), platform);
  printf ("  %-12s %s\n", "index", image->index_digest ? image->index_digest : "(none)");
  printf ("  %-12s %s\n", "manifest", image->manifest_digest);
  printf ("  %-12s %s\n", "config", image->config_digest);
  printf ("  %-12s %u\n", "layers", image->layers->len);
  for (guint i = 0; i < image->layers->len; i++)
    {
      const AirlockImageLayer *layer = image->layers->pdata[i];
      g_autofree char *size = g_format_size (layer->size);
      printf ("    %3u  %s  %12" G_GUINT64_FORMAT " bytes (%s)  %s\n", i + 1, layer->digest,
              layer->size, size, airlock_layer_compression_to_string (layer->compression));
    }
  printf ("  %-12s %s\n", "entrypoint", entrypoint);
  printf ("  %-12s %s\n", "cmd", cmd);
  print_field ("env", image->env ? image->env[0] : NULL, "(none)");
  for (guint i = 1; image->env && image->env[i]; i++)
    print_field ("", image->env[i], "");
  print_field ("workdir", image->working_dir, "(none: /)");
  print_field ("user", image->user, "(none: root)");
  if (image->stop_signal)
    printf ("  %-12s %d (%s)\n", "stopsignal", image->stop_signal, g_strsignal (image->stop_signal));
  else
    printf ("  %-12s %s\n", "stopsignal", "(none: 15, SIGTERM)");
}

/* Resolves every arch of @reference (or those of @wanted) with every JSON
 * blob verified; layers are listed, not read.  Exit: 0, or the image
 * error's own status (harness.h). */
/* inspect --json's last line, whatever happened once the options parsed. */
static int
inspect_summary (gboolean json, const char *reference, int status, GPtrArray *images,
                 GPtrArray *others, const char *error)
{
  g_autoptr (JsonBuilder) builder = NULL;

  if (!json)
    return status;
  builder = json_builder_new ();
  json_builder_begin_object (builder);
  add_string_member (builder, "type", "summary");
  add_string_member (builder, "command", "images inspect");
  add_string_member (builder, "reference", reference);
  json_builder_set_member_name (builder, "exit_status");
  json_builder_add_int_value (builder, status);
  add_string_member (builder, "error", error);
  json_builder_set_member_name (builder, "arches");
  json_builder_begin_array (builder);
  for (guint i = 0; images && i < images->len; i++)
    json_builder_add_string_value (builder,
                                   airlock_arch_to_string (((AirlockImage *) images->pdata[i])->arch));
  json_builder_end_array (builder);
  json_builder_set_member_name (builder, "other_platforms");
  json_builder_begin_array (builder);
  for (guint i = 0; others && i < others->len; i++)
    json_builder_add_string_value (builder, others->pdata[i]);
  json_builder_end_array (builder);
  json_builder_end_object (builder);
  harness_print_json_line (builder);
  return status;
}

static int
inspect_image (const char *reference, const gboolean *wanted, gboolean json, const char *cache_dir)
{
  g_autoptr (AirlockImageSource) source = NULL;
  g_autoptr (GArray) arches = NULL;
  g_autoptr (GPtrArray) others = NULL;
  g_autoptr (GPtrArray) images = g_ptr_array_new_with_free_func ((GDestroyNotify) airlock_image_free);
  g_autoptr (GError) error = NULL;
  gboolean present[AIRLOCK_N_ARCHES] = { FALSE };

  source = airlock_image_source_open_cached (reference, cache_dir, &error);
  if (source)
    arches = airlock_image_source_list_arches (source, &others, &error);
  if (!arches)
    {
      fprintf (stderr, "airlock images inspect: %s\n", error->message);
      return inspect_summary (json, reference, harness_exit_for_image_error (error), NULL, NULL,
                              error->message);
    }
  for (guint i = 0; i < arches->len; i++)
    present[g_array_index (arches, AirlockArch, i)] = TRUE;
  for (guint a = 0; a < AIRLOCK_N_ARCHES; a++)
    {
      AirlockImage *image;

      if (wanted && !wanted[a])
        continue;
      /* Asked for an arch it lacks: resolve anyway, for the error. */
      if (!wanted && !present[a])
        continue;
      image = airlock_image_resolve (source, (AirlockArch) a, &error);
      if (!image)
        {
          fprintf (stderr, "airlock images inspect: %s\n", error->message);
          return inspect_summary (json, reference, harness_exit_for_image_error (error), NULL,
                                  others, error->message);
        }
      g_ptr_array_add (images, image);
    }
  if (images->len == 0)
    {
      g_autofree char *message = g_strdup_printf ("%s: no linux/amd64 or linux/arm64 image%s%s",
                                                  reference, others && others->len ? "; it has " : "",
                                                  others && others->len ? (char *) others->pdata[0] : "");

      fprintf (stderr, "airlock images inspect: %s\n", message);
      return inspect_summary (json, reference, HARNESS_EXIT_IMAGE_NO_ARCH, NULL, others, message);
    }

  if (json)
    {
      /* JSON Lines: an image line per arch, the summary last. */
      for (guint i = 0; i < images->len; i++)
        {
          g_autoptr (JsonBuilder) builder = json_builder_new ();

          build_image_json (builder, reference, images->pdata[i]);
          harness_print_json_line (builder);
        }
      return inspect_summary (TRUE, reference, HARNESS_EXIT_OK, images, others, NULL);
    }

  printf ("image %s\n", reference);
  for (guint i = 0; i < images->len; i++)
    print_inspected (images->pdata[i]);
  if (others && others->len)
    {
      printf ("other platforms (not run by airlock):");
      for (guint i = 0; i < others->len; i++)
        printf (" %s", (char *) others->pdata[i]);
      printf ("\n");
    }
  return HARNESS_EXIT_OK;
}

/* ---- images export FILE / images import FILE -------------------------- */

static int
export_images (const char *file, const gboolean *arches, const ImagesArgs *args)
{
  AirlockGuestImageOptions opts = {
    .cache_dir = args->cache_dir,
    .kernel_path = args->kernel,
    .modules_dir = args->modules,
  };
  g_autoptr (GPtrArray) dirs = NULL;
  g_autoptr (GError) error = NULL;
  g_autofree char *sha256 = NULL;
  GStatBuf st;

  if (!airlock_guest_images_export (&opts, arches, file, &dirs, &error))
    {
      fprintf (stderr, "airlock images export: %s\n", error->message);
      return HARNESS_EXIT_SETUP;
    }
  for (guint i = 0; i < dirs->len; i++)
    printf ("exported %s\n", (char *) dirs->pdata[i]);
  sha256 = airlock_sha256_file (file, &error);
  if (!sha256 || g_stat (file, &st) < 0)
    {
      fprintf (stderr, "airlock images export: cannot read back '%s': %s\n", file,
               error ? error->message : g_strerror (errno));
      return HARNESS_EXIT_SETUP;
    }
  printf ("%s: %" G_GINT64_FORMAT " bytes, sha256 %s\n", file, (gint64) st.st_size, sha256);
  return HARNESS_EXIT_OK;
}

static int
import_images (const char *file, const ImagesArgs *args)
{
  g_autoptr (GPtrArray) dirs = NULL;
  g_autoptr (GError) error = NULL;

  if (!airlock_guest_images_import (args->cache_dir, file, &dirs, &error))
    {
      fprintf (stderr, "airlock images import: %s\n", error->message);
      return HARNESS_EXIT_SETUP;
    }
  for (guint i = 0; i < dirs->len; i++)
    printf ("imported %s\n", (char *) dirs->pdata[i]);
  /* What this airlock will boot now: an archive of another airlock's (or
   * another kernels.ini's) images is installed, but not used. */
  for (guint a = 0; a < AIRLOCK_N_ARCHES; a++)
    {
      AirlockGuestImageOptions opts = { .cache_dir = args->cache_dir, .offline = TRUE };
      g_autoptr (AirlockGuestImage) image = NULL;
      g_autoptr (GError) lookup_error = NULL;

      image = airlock_guest_image_ensure ((AirlockArch) a, &opts, &lookup_error);
      if (image)
        printf ("%s: guest image ready: %s\n", airlock_arch_to_string (image->arch), image->dir);
      else
        printf ("%s: no guest image for this airlock yet: %s\n",
                airlock_arch_to_string ((AirlockArch) a), lookup_error->message);
    }
  return HARNESS_EXIT_OK;
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
    { "kernel-dir", 0, 0, G_OPTION_ARG_FILENAME, &args.kernel_dir,
      "build: a directory holding the pinned kernel .deb, tried when neither apt nor the "
      "snapshot archive gives it (default: $AIRLOCK_KERNEL_DIR)", "DIR" },
    { "cache-dir", 0, 0, G_OPTION_ARG_FILENAME, &args.cache_dir,
      "Cache root (default: $AIRLOCK_CACHE_DIR, else $XDG_CACHE_HOME/airlock)", "DIR" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &args.json,
      "inspect: print one JSON object", NULL },
    { NULL }
  };
  g_autoptr (GOptionContext) context = g_option_context_new ("build|show|inspect REF|export FILE|import FILE");
  g_autoptr (GError) error = NULL;
  gboolean arches[AIRLOCK_N_ARCHES] = { FALSE };
  gboolean (*run) (AirlockArch, const ImagesArgs *) = NULL;
  gboolean ok = TRUE;
  const char *subcommand;

  g_option_context_set_summary (context,
    "  build   build the guest images that are not cached (downloads the pinned\n"
    "          kernel packages the first time)\n"
    "  show    print the cached guest images; exits 4 when one is not built\n"
    "  inspect REF\n"
    "          resolve a container image (oci:DIR[:TAG], oci-archive:FILE[:TAG],\n"
    "          docker-archive:FILE, docker://NAME[:TAG|@DIGEST] or\n"
    "          containers-storage:NAME, the last two through skopeo) for each arch\n"
    "          it has, or those of --arch: the index, manifest and config digests\n"
    "          (every JSON blob verified), its layers, entrypoint, cmd, env,\n"
    "          workdir and user.  Exits 10-20 on an unusable image (one status per\n"
    "          kind of error, see the README)\n"
    "  export FILE\n"
    "          write the built guest images (of --arch, default all) to a tar\n"
    "          archive with every file's SHA-256; prints the archive's own\n"
    "  import FILE\n"
    "          check every file of such an archive against its digests (a\n"
    "          changed file is refused, naming it) and install it in the cache");
  g_option_context_add_main_entries (context, entries, NULL);
  g_set_prgname ("airlock images");
  if (!g_option_context_parse (context, &argc, &argv, &error))
    {
      fprintf (stderr, "airlock images: %s\n", error->message);
      return HARNESS_EXIT_USAGE;
    }
  if (argc >= 2 && g_str_equal (argv[1], "inspect"))
    {
      if (argc != 3)
        {
          fprintf (stderr, "airlock images inspect: expected one image reference "
                           "(oci:DIR[:TAG], oci-archive:FILE[:TAG], docker-archive:FILE, docker://NAME or "
                           "containers-storage:NAME)\n");
          return HARNESS_EXIT_USAGE;
        }
      if (args.force || args.kernel || args.modules || args.kernel_dir)
        {
          fprintf (stderr, "airlock images inspect: --force, --kernel, --modules and --kernel-dir "
                           "do not apply\n");
          return HARNESS_EXIT_USAGE;
        }
      if (args.arch_spec && !harness_parse_arches (args.arch_spec, arches, &error))
        {
          fprintf (stderr, "airlock images: %s\n", error->message);
          return HARNESS_EXIT_USAGE;
        }
      return inspect_image (argv[2], args.arch_spec ? arches : NULL, args.json, args.cache_dir);
    }
  if (args.json)
    {
      fprintf (stderr, "airlock images: --json only applies to 'inspect'\n");
      return HARNESS_EXIT_USAGE;
    }
  if (argc >= 2 && (g_str_equal (argv[1], "export") || g_str_equal (argv[1], "import")))
    {
      if (argc != 3)
        {
          fprintf (stderr, "airlock images %s: expected one FILE\n", argv[1]);
          return HARNESS_EXIT_USAGE;
        }
      if (args.force || args.kernel_dir)
        {
          fprintf (stderr, "airlock images: --force and --kernel-dir only apply to 'build'\n");
          return HARNESS_EXIT_USAGE;
        }
      if (g_str_equal (argv[1], "import"))
        {
          if (args.arch_spec || args.kernel || args.modules)
            {
              fprintf (stderr, "airlock images import: --arch, --kernel and --modules do not "
                               "apply (the archive says what it holds)\n");
              return HARNESS_EXIT_USAGE;
            }
          return import_images (argv[2], &args);
        }
    }
  else if (argc != 2)
    {
      fprintf (stderr, "airlock images: expected one of 'build', 'show', 'inspect REF', "
                       "'export FILE' or 'import FILE' (see --help)\n");
      return HARNESS_EXIT_USAGE;
    }
  subcommand = argv[1];
  if (g_str_equal (subcommand, "build"))
    run = build_one;
  else if (g_str_equal (subcommand, "show") || g_str_equal (subcommand, "export"))
    run = show_one;
  else
    {
      fprintf (stderr, "airlock images: unknown subcommand '%s' (expected 'build', 'show', "
                       "'inspect', 'export' or 'import')\n", subcommand);
      return HARNESS_EXIT_USAGE;
    }
  if ((args.force || args.kernel_dir) && run == show_one)
    {
      fprintf (stderr, "airlock images: --force and --kernel-dir only apply to 'build'\n");
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

  if (g_str_equal (subcommand, "export"))
    return export_images (argv[2], arches, &args);
  for (guint i = 0; i < AIRLOCK_N_ARCHES; i++)
    if (arches[i])
      ok = run ((AirlockArch) i, &args) && ok;
  return ok ? HARNESS_EXIT_OK : HARNESS_EXIT_SETUP;
}
