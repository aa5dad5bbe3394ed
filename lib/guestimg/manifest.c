#include "config.h"

#include "guestimg/manifest-private.h"
#include "cache-dir-private.h"
#include "json-util-private.h"

#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/stat.h>

void
airlock_guest_inputs_free (AirlockGuestInputs *in)
{
  if (!in)
    return;
  g_free (in->cache_dir);
  g_free (in->arch_dir);
  airlock_kernel_pin_free (in->pin);
  g_free (in->custom_kernel);
  g_free (in->custom_kernel_sha256);
  g_free (in->custom_modules_dir);
  g_free (in->custom_release);
  g_free (in->custom_modules_fingerprint);
  g_clear_pointer (&in->requests, g_ptr_array_unref);
  for (guint i = 0; i < in->n_programs; i++)
    {
      g_free (in->programs[i].host_path);
      g_free (in->programs[i].sha256);
    }
  g_free (in->programs);
  g_free (in->kernel_key);
  g_free (in->key);
  g_free (in);
}

void
airlock_guest_file_free (AirlockGuestFile *file)
{
  if (!file)
    return;
  g_free (file->name);
  g_free (file->path);
  g_free (file->sha256);
  g_free (file);
}

void
airlock_guest_build_free (AirlockGuestBuild *build)
{
  if (!build)
    return;
  g_free (build->release);
  g_free (build->kernel_file);
  g_free (build->kernel_format);
  g_free (build->kernel_how);
  g_free (build->kernel_sha256);
  g_clear_pointer (&build->files, g_ptr_array_unref);
  g_clear_pointer (&build->builtin, g_ptr_array_unref);
  g_clear_pointer (&build->absent_optional, g_ptr_array_unref);
  g_free (build->module_signatures);
  g_free (build->depmod_version);
  g_free (build->initramfs_sha256);
  g_free (build);
}

char *
airlock_guest_inputs_describe_kernel (AirlockGuestInputs *in)
{
  if (in->pin)
    return g_strdup_printf ("debian %s %s sha256:%s", in->pin->package, in->pin->version,
                            in->pin->sha256);
  return g_strdup_printf ("custom %s", in->custom_kernel);
}

/* Reads the manifest's record of one output and checks the file against it.
 * Hashing the outputs on every lookup would cost too much: GChecksum's
 * SHA-256 runs at ~120 MB/s here, ~0.55 s for the 66 MB amd64 vmlinux (and
 * 35 ms for a 4 MB initramfs) against a 2 s boot.  So a lookup checks what a
 * damaged or edited file changes instead: it is a regular file of the
 * recorded size, not modified after the manifest was written (outputs are
 * written first, the manifest last, and the directory appears whole by
 * rename(); a crash before the data reached the disk leaves a wrong size).
 * This guards against accidents, not against someone who can write the
 * cache: they could rewrite the manifest too. */

static gboolean
check_output (JsonObject *outputs, const char *member, const char *dir,
              const struct stat *manifest_st, const char **ret_file, const char **ret_sha256,
              char **ret_why)
{
  JsonObject *o = airlock_json_get_object (outputs, member);
  const char *file = airlock_json_get_string (o, "file");
  const char *sha256 = airlock_json_get_string (o, "sha256");
  gint64 size;

  /* The manifest names a file in this directory, nothing else. */
  if (!file || !*file || strchr (file, '/') || g_str_equal (file, ".") || g_str_equal (file, "..")
      || !sha256 || !airlock_json_get_int (o, "size", &size))
    {
      *ret_why = g_strdup_printf ("its manifest has no valid '%s' output", member);
      return FALSE;
    }
  if (!airlock_cache_check_file (dir, file, size, manifest_st, ret_why))
    return FALSE;
  *ret_file = file;
  *ret_sha256 = sha256;
  return TRUE;
}

AirlockGuestImage *
airlock_guest_manifest_load (AirlockGuestInputs *in, const char *dir, char **ret_why)
{
  g_autofree char *manifest_path = g_build_filename (dir, AIRLOCK_GUEST_MANIFEST_FILE, NULL);
  g_autoptr (JsonNode) parsed = NULL;
  g_autoptr (AirlockGuestImage) image = NULL;
  JsonObject *root, *outputs;
  const char *kernel_file, *kernel_sha256, *initramfs_file, *initramfs_sha256, *release;
  struct stat manifest_st;

  parsed = airlock_cache_manifest_lookup (manifest_path, "manifest", AIRLOCK_GUEST_IMAGE_BUILDER,
                                          in->key, "not built yet", &manifest_st, ret_why);
  if (!parsed)
    return NULL;
  root = json_node_get_object (parsed);
  outputs = airlock_json_get_object (root, "outputs");
  release = airlock_json_get_string (outputs, "kernel_release");
  if (!release)
    {
      *ret_why = g_strdup ("its manifest has no kernel release");
      return NULL;
    }
  if (!check_output (outputs, "kernel", dir, &manifest_st, &kernel_file, &kernel_sha256, ret_why)
      || !check_output (outputs, "initramfs", dir, &manifest_st, &initramfs_file, &initramfs_sha256,
                        ret_why))
    return NULL;

  image = g_new0 (AirlockGuestImage, 1);
  image->arch = in->arch;
  image->dir = g_strdup (dir);
  image->kernel_path = g_build_filename (dir, kernel_file, NULL);
  image->initramfs_path = g_build_filename (dir, initramfs_file, NULL);
  image->manifest_path = g_steal_pointer (&manifest_path);
  image->kernel_release = g_strdup (release);
  image->kernel_sha256 = g_strdup (kernel_sha256);
  image->initramfs_sha256 = g_strdup (initramfs_sha256);
  image->kernel_source = airlock_guest_inputs_describe_kernel (in);
  *ret_why = NULL;
  return g_steal_pointer (&image);
}

static void
add_kernel (JsonBuilder *b, AirlockGuestBuild *build)
{
  json_builder_set_member_name (b, "kernel");
  json_builder_begin_object (b);
  airlock_json_set_str (b, "file", build->kernel_file);
  airlock_json_set_str (b, "format", build->kernel_format);
  airlock_json_set_str (b, "how", build->kernel_how);
  airlock_json_set_int (b, "size", build->kernel_size);
  airlock_json_set_str (b, "sha256", build->kernel_sha256);
  json_builder_end_object (b);
}

static void
add_string_array (JsonBuilder *b, const char *member, GPtrArray *strings)
{
  json_builder_set_member_name (b, member);
  json_builder_begin_array (b);
  for (guint i = 0; i < strings->len; i++)
    airlock_json_set_str (b, NULL, strings->pdata[i]);
  json_builder_end_array (b);
}

gboolean
airlock_guest_manifest_write (AirlockGuestInputs *in, AirlockGuestBuild *result, const char *path,
                              GError **error)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autofree char *source = airlock_guest_inputs_describe_kernel (in);

  json_builder_begin_object (b);
  airlock_json_set_str (b, "builder", AIRLOCK_GUEST_IMAGE_BUILDER);
  airlock_json_set_str (b, "key", in->key);
  airlock_json_set_str (b, "arch", airlock_arch_to_string (in->arch));

  json_builder_set_member_name (b, "inputs");
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "kernel");
  json_builder_begin_object (b);
  airlock_json_set_str (b, "description", source);
  if (in->pin)
    {
      airlock_json_set_str (b, "source", "debian");
      airlock_json_set_str (b, "package", in->pin->package);
      airlock_json_set_str (b, "version", in->pin->version);
      airlock_json_set_str (b, "sha256", in->pin->sha256);
      airlock_json_set_int (b, "size", in->pin->size);
    }
  else
    {
      airlock_json_set_str (b, "source", "custom");
      airlock_json_set_str (b, "path", in->custom_kernel);
      airlock_json_set_str (b, "sha256", in->custom_kernel_sha256);
      airlock_json_set_str (b, "modules_dir", in->custom_modules_dir);
      airlock_json_set_str (b, "modules_fingerprint", in->custom_modules_fingerprint);
    }
  json_builder_end_object (b);

  json_builder_set_member_name (b, "modules_list");
  json_builder_begin_array (b);
  for (guint i = 0; i < in->requests->len; i++)
    {
      AirlockModuleRequest *r = in->requests->pdata[i];
      g_autofree char *word = g_strconcat (r->name, r->optional ? "?" : "", NULL);
      airlock_json_set_str (b, NULL, word);
    }
  json_builder_end_array (b);

  json_builder_set_member_name (b, "programs");
  json_builder_begin_array (b);
  for (guint i = 0; i < in->n_programs; i++)
    {
      json_builder_begin_object (b);
      airlock_json_set_str (b, "name", in->programs[i].name);
      airlock_json_set_str (b, "path", in->programs[i].path);
      airlock_json_set_str (b, "sha256", in->programs[i].sha256);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);

  airlock_json_set_str (b, "depmod",
                        result->depmod_version ? result->depmod_version : "unknown");
  json_builder_end_object (b);

  json_builder_set_member_name (b, "outputs");
  json_builder_begin_object (b);
  airlock_json_set_str (b, "kernel_release", result->release);
  add_kernel (b, result);
  json_builder_set_member_name (b, "initramfs");
  json_builder_begin_object (b);
  airlock_json_set_str (b, "file", AIRLOCK_GUEST_INITRAMFS_FILE);
  airlock_json_set_int (b, "size", result->initramfs_size);
  airlock_json_set_str (b, "sha256", result->initramfs_sha256);
  json_builder_end_object (b);

  json_builder_set_member_name (b, "modules");
  json_builder_begin_array (b);
  for (guint i = 0; i < result->files->len; i++)
    {
      AirlockGuestFile *f = result->files->pdata[i];

      if (!f->name)
        continue;
      json_builder_begin_object (b);
      airlock_json_set_str (b, "name", f->name);
      airlock_json_set_str (b, "path", f->path);
      airlock_json_set_str (b, "sha256", f->sha256);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  add_string_array (b, "builtin_modules", result->builtin);
  add_string_array (b, "absent_optional_modules", result->absent_optional);
  airlock_json_set_str (b, "module_signatures",
                        result->module_signatures ? result->module_signatures : "kept");
  json_builder_end_object (b);
  json_builder_end_object (b);

  return airlock_cache_manifest_write (b, path, G_FILE_SET_CONTENTS_NONE, error);
}


gboolean
airlock_guest_stage_write (AirlockGuestInputs *in, AirlockGuestBuild *build, const char *path,
                           GError **error)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();

  json_builder_begin_object (b);
  airlock_json_set_str (b, "builder", AIRLOCK_GUEST_IMAGE_BUILDER);
  airlock_json_set_str (b, "key", in->kernel_key);
  airlock_json_set_str (b, "arch", airlock_arch_to_string (in->arch));
  airlock_json_set_str (b, "kernel_release", build->release);
  add_kernel (b, build);
  json_builder_set_member_name (b, "files");
  json_builder_begin_array (b);
  for (guint i = 0; i < build->files->len; i++)
    {
      AirlockGuestFile *f = build->files->pdata[i];

      json_builder_begin_object (b);
      if (f->name)
        {
          airlock_json_set_str (b, "name", f->name);
        }
      airlock_json_set_str (b, "path", f->path);
      airlock_json_set_int (b, "size", f->size);
      airlock_json_set_str (b, "sha256", f->sha256);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  add_string_array (b, "builtin_modules", build->builtin);
  add_string_array (b, "absent_optional_modules", build->absent_optional);
  airlock_json_set_str (b, "module_signatures",
                        build->module_signatures ? build->module_signatures : "kept");
  airlock_json_set_str (b, "depmod", build->depmod_version ? build->depmod_version : "unknown");
  json_builder_end_object (b);
  return airlock_cache_manifest_write (b, path, G_FILE_SET_CONTENTS_NONE, error);
}

/* A relative path with no "." or ".." components: stage files are opened
 * under the stage directory and stored in the initramfs under this name. */
static gboolean
stage_path_is_safe (const char *path)
{
  g_auto (GStrv) parts = NULL;

  if (!path || !*path || *path == '/')
    return FALSE;
  parts = g_strsplit (path, "/", -1);
  for (guint i = 0; parts[i]; i++)
    if (!*parts[i] || g_str_equal (parts[i], ".") || g_str_equal (parts[i], ".."))
      return FALSE;
  return TRUE;
}

static GPtrArray *
string_array (JsonObject *o, const char *name)
{
  JsonArray *a = airlock_json_get_array (o, name);
  g_autoptr (GPtrArray) strings = g_ptr_array_new_with_free_func (g_free);

  if (!a)
    return NULL;
  for (guint i = 0; i < json_array_get_length (a); i++)
    {
      JsonNode *e = json_array_get_element (a, i);

      if (!JSON_NODE_HOLDS_VALUE (e) || json_node_get_value_type (e) != G_TYPE_STRING)
        return NULL;
      g_ptr_array_add (strings, g_strdup (json_node_get_string (e)));
    }
  return g_steal_pointer (&strings);
}

AirlockGuestBuild *
airlock_guest_stage_load (AirlockGuestInputs *in, const char *dir, char **ret_why)
{
  g_autofree char *manifest_path = g_build_filename (dir, AIRLOCK_GUEST_STAGE_MANIFEST_FILE, NULL);
  g_autoptr (JsonNode) parsed = NULL;
  g_autoptr (AirlockGuestBuild) build = g_new0 (AirlockGuestBuild, 1);
  JsonObject *root, *kernel;
  JsonArray *files;
  const char *kernel_file, *kernel_sha256;
  gint64 kernel_size;
  struct stat manifest_st;

  *ret_why = NULL;
  parsed = airlock_cache_manifest_lookup (manifest_path, "kernel.json", AIRLOCK_GUEST_IMAGE_BUILDER,
                                          in->kernel_key, "not extracted yet", &manifest_st,
                                          ret_why);
  if (!parsed)
    return NULL;
  root = json_node_get_object (parsed);
  kernel = airlock_json_get_object (root, "kernel");
  files = airlock_json_get_array (root, "files");
  build->release = g_strdup (airlock_json_get_string (root, "kernel_release"));
  build->kernel_format = g_strdup (airlock_json_get_string (kernel, "format"));
  build->kernel_how = g_strdup (airlock_json_get_string (kernel, "how"));
  build->builtin = string_array (root, "builtin_modules");
  build->absent_optional = string_array (root, "absent_optional_modules");
  build->depmod_version = g_strdup (airlock_json_get_string (root, "depmod"));
  build->module_signatures = g_strdup (airlock_json_get_string (root, "module_signatures"));
  if (!build->release || !build->module_signatures || !build->kernel_format || !build->kernel_how || !build->builtin
      || !build->absent_optional || !files
      || !check_output (root, "kernel", dir, &manifest_st, &kernel_file, &kernel_sha256, ret_why)
      || !airlock_json_get_int (kernel, "size", &kernel_size))
    {
      if (!*ret_why)
        *ret_why = g_strdup ("its kernel.json is incomplete");
      return NULL;
    }
  build->kernel_file = g_strdup (kernel_file);
  build->kernel_sha256 = g_strdup (kernel_sha256);
  build->kernel_size = kernel_size;

  build->files = g_ptr_array_new_with_free_func ((GDestroyNotify) airlock_guest_file_free);
  for (guint i = 0; i < json_array_get_length (files); i++)
    {
      JsonNode *e = json_array_get_element (files, i);
      JsonObject *o = JSON_NODE_HOLDS_OBJECT (e) ? json_node_get_object (e) : NULL;
      AirlockGuestFile *f = g_new0 (AirlockGuestFile, 1);
      gint64 size = -1;

      g_ptr_array_add (build->files, f);
      f->name = g_strdup (airlock_json_get_string (o, "name"));
      f->path = g_strdup (airlock_json_get_string (o, "path"));
      f->sha256 = g_strdup (airlock_json_get_string (o, "sha256"));
      if (!stage_path_is_safe (f->path) || !f->sha256 || !airlock_json_get_int (o, "size", &size) || size < 0)
        {
          *ret_why = g_strdup ("its kernel.json lists an invalid file");
          return NULL;
        }
      f->size = size;
      /* Checked like an image's outputs (see check_output). */
      if (!airlock_cache_check_file (dir, f->path, f->size, &manifest_st, ret_why))
        return NULL;
    }
  *ret_why = NULL;
  return g_steal_pointer (&build);
}
