#include "config.h"

#include "guestimg/testroot-private.h"

#include "fsutil-private.h"
#include "json-util-private.h"
#include "guestimg/guest-image.h"
#include "guestimg/initramfs-variant-private.h"
#include "guestimg/package-private.h"

/* The behaviours list the test program dispatches on: one source for its
 * table and for the links made here (guest/behaviours.h). */
#include "behaviours.h"

#include <errno.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>
#include <sys/stat.h>

/* The test programs: @name-<arch> in the programs directory, stored as
 * bin/@name.  Optional ones are left out when they were not built (the
 * AArch32 binary needs a cross compiler the build may lack; the behaviour
 * that runs it says so in the guest). */
static const struct {
  const char *name;
  guint arches;
  gboolean optional;
} testroot_programs[] = {
  { "testprog", TESTPROG_BOTH, FALSE },
  { "testprog-exec", TESTPROG_BOTH, FALSE },
  { "testprog-arm32", TESTPROG_ARM64, TRUE },
};

/* Directories a root needs that nothing else creates: mount points for the
 * supervisor (proc, dev, sys), files it writes (etc), a home and a /tmp. */
static const struct {
  const char *name;
  guint mode;
} testroot_dirs[] = {
  { "dev", 0755 }, { "etc", 0755 }, { "proc", 0555 }, { "root", 0700 }, { "sys", 0555 },
  { "tmp", 01777 },
};

static const struct {
  const char *command;
  guint arches;
} testroot_commands[] = {
#define COMMAND(command, function, arches) { command, arches },
  TESTPROG_BEHAVIOURS (COMMAND)
  TESTPROG_NET_BEHAVIOURS (COMMAND)
#undef COMMAND
};

static void
testroot_program_free (gpointer p)
{
  AirlockTestrootProgram *prog = p;

  g_free (prog->name);
  g_free (prog->path);
  g_free (prog->host_path);
  g_free (prog->sha256);
  g_free (prog);
}

void
airlock_testroot_free (AirlockTestroot *testroot)
{
  if (!testroot)
    return;
  g_clear_pointer (&testroot->programs, g_ptr_array_unref);
  g_clear_pointer (&testroot->commands, g_ptr_array_unref);
  g_clear_pointer (&testroot->packages, g_ptr_array_unref);
  g_free (testroot);
}

static guint
arch_mask (AirlockArch arch)
{
  return arch == AIRLOCK_ARCH_AMD64 ? TESTPROG_AMD64 : TESTPROG_ARM64;
}

AirlockTestroot *
airlock_testroot_load (AirlockArch arch, const char *programs_dir, const char *recipe_path,
                       GError **error)
{
  g_autoptr (AirlockTestroot) testroot = g_new0 (AirlockTestroot, 1);
  const char *arch_name = airlock_arch_to_string (arch);

  testroot->arch = arch;
  testroot->programs = g_ptr_array_new_with_free_func (testroot_program_free);
  testroot->commands = g_ptr_array_new ();
  for (guint i = 0; i < G_N_ELEMENTS (testroot_programs); i++)
    {
      g_autofree char *file = NULL;
      g_autofree char *host_path = NULL;
      g_autofree char *sha256 = NULL;
      g_autoptr (GError) local_error = NULL;
      AirlockTestrootProgram *prog;

      if (!(testroot_programs[i].arches & arch_mask (arch)))
        continue;
      file = g_strdup_printf ("%s-%s", testroot_programs[i].name, arch_name);
      host_path = g_build_filename (programs_dir, file, NULL);
      if (testroot_programs[i].optional && !g_file_test (host_path, G_FILE_TEST_EXISTS))
        continue;
      sha256 = airlock_sha256_file (host_path, &local_error);
      if (!sha256)
        {
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_GUEST_PROGRAM,
                       "cannot use test program '%s' for the %s testroot: %s (build airlock "
                       "with its tests, or point $AIRLOCK_GUEST_DIR at the directory holding %s)",
                       host_path, arch_name, local_error->message, file);
          return NULL;
        }
      prog = g_new0 (AirlockTestrootProgram, 1);
      prog->name = g_strdup (testroot_programs[i].name);
      prog->path = g_strdup_printf (AIRLOCK_TESTROOT_PATH "/bin/%s", testroot_programs[i].name);
      prog->host_path = g_steal_pointer (&host_path);
      prog->sha256 = g_steal_pointer (&sha256);
      g_ptr_array_add (testroot->programs, prog);
    }
  for (guint i = 0; i < G_N_ELEMENTS (testroot_commands); i++)
    if (testroot_commands[i].arches & arch_mask (arch))
      g_ptr_array_add (testroot->commands, (gpointer) testroot_commands[i].command);
  testroot->packages = airlock_testroot_packages_load (recipe_path, arch, error);
  if (!testroot->packages)
    return NULL;
  return g_steal_pointer (&testroot);
}

char *
airlock_testroot_key (AirlockTestroot *testroot, const char *base_initramfs_sha256)
{
  g_autoptr (GString) s = g_string_new (NULL);

  /* One line per input; names and digests hold no newline. */
  g_string_append_printf (s, "builder %s\narch %s\nbase %s\n", AIRLOCK_TESTROOT_BUILDER,
                          airlock_arch_to_string (testroot->arch), base_initramfs_sha256);
  for (guint i = 0; i < testroot->programs->len; i++)
    {
      AirlockTestrootProgram *prog = testroot->programs->pdata[i];
      g_string_append_printf (s, "file %s 755 %s\n", prog->path, prog->sha256);
    }
  for (guint i = 0; i < testroot->commands->len; i++)
    g_string_append_printf (s, "link %s/bin/%s testprog\n", AIRLOCK_TESTROOT_PATH,
                            (const char *) testroot->commands->pdata[i]);
  for (guint i = 0; i < G_N_ELEMENTS (testroot_dirs); i++)
    g_string_append_printf (s, "dir %s/%s %o\n", AIRLOCK_TESTROOT_PATH, testroot_dirs[i].name,
                            testroot_dirs[i].mode);
  /* The pin fixes the package's bytes, and with them those of every file
   * taken from it: no need to download anything to know the key. */
  for (guint i = 0; i < testroot->packages->len; i++)
    {
      AirlockTestrootPackage *pkg = testroot->packages->pdata[i];

      g_string_append_printf (s, "deb %s %s %s %" G_GUINT64_FORMAT "\n", pkg->pin->package,
                              pkg->pin->version, pkg->pin->sha256, pkg->pin->size);
      for (guint f = 0; pkg->files[f]; f++)
        g_string_append_printf (s, "from %s %s/%s\n", pkg->pin->package, AIRLOCK_TESTROOT_PATH,
                                pkg->files[f]);
    }
  return g_compute_checksum_for_string (G_CHECKSUM_SHA256, s->str, s->len);
}

/* Adds the files of @pkg from @packages_dir, where they were extracted at
 * their package paths: a symlink as a symlink (its target as the package
 * has it: resolved in the guest, inside the testroot), a file with its
 * package's permission bits. */
static gboolean
add_package_files (AirlockTestrootPackage *pkg, AirlockCpio *cpio, const char *packages_dir,
                   GError **error)
{
  for (guint f = 0; pkg->files[f]; f++)
    {
      g_autofree char *host_path = g_build_filename (packages_dir, pkg->files[f], NULL);
      g_autofree char *path = g_strdup_printf (AIRLOCK_TESTROOT_PATH "/%s", pkg->files[f]);
      GStatBuf st;

      if (g_lstat (host_path, &st) < 0)
        {
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                       "testroot package '%s' version '%s' has no '%s' (named in '%s')",
                       pkg->pin->package, pkg->pin->version, pkg->files[f], pkg->pin->origin);
          return FALSE;
        }
      if (S_ISLNK (st.st_mode))
        {
          g_autofree char *target = g_file_read_link (host_path, error);

          if (!target || !airlock_cpio_add_symlink (cpio, path, target, error))
            return FALSE;
        }
      else if (S_ISREG (st.st_mode))
        {
          if (!airlock_cpio_add_file (cpio, path, st.st_mode & 0755, host_path, error))
            return FALSE;
        }
      else
        {
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                       "'%s' of testroot package '%s' (named in '%s') is neither a file nor a "
                       "symlink", pkg->files[f], pkg->pin->package, pkg->pin->origin);
          return FALSE;
        }
    }
  return TRUE;
}

gboolean
airlock_testroot_add_to (AirlockTestroot *testroot, AirlockCpio *cpio, const char *packages_dir,
                         GError **error)
{
  for (guint i = 0; i < testroot->programs->len; i++)
    {
      AirlockTestrootProgram *prog = testroot->programs->pdata[i];

      if (!airlock_cpio_add_file (cpio, prog->path, 0755, prog->host_path, error))
        return FALSE;
    }
  for (guint i = 0; i < testroot->commands->len; i++)
    {
      g_autofree char *link = g_strdup_printf (AIRLOCK_TESTROOT_PATH "/bin/%s",
                                               (const char *) testroot->commands->pdata[i]);

      if (!airlock_cpio_add_symlink (cpio, link, "testprog", error))
        return FALSE;
    }
  for (guint i = 0; i < G_N_ELEMENTS (testroot_dirs); i++)
    {
      g_autofree char *dir = g_strdup_printf (AIRLOCK_TESTROOT_PATH "/%s", testroot_dirs[i].name);

      if (!airlock_cpio_add_directory (cpio, dir, testroot_dirs[i].mode, error))
        return FALSE;
    }
  for (guint i = 0; packages_dir && i < testroot->packages->len; i++)
    if (!add_package_files (testroot->packages->pdata[i], cpio, packages_dir, error))
      return FALSE;
  return TRUE;
}

gboolean
airlock_testroot_extract_packages (AirlockTestroot *testroot, const char *downloads_dir,
                                   const char *dest, AirlockProgressFunc progress,
                                   gpointer progress_data, GError **error)
{
  for (guint i = 0; i < testroot->packages->len; i++)
    {
      AirlockTestrootPackage *pkg = testroot->packages->pdata[i];
      g_autofree char *deb = NULL;
      g_autofree char *what = g_strdup_printf ("testroot package '%s' version '%s'",
                                               pkg->pin->package, pkg->pin->version);
      g_autofree char *stage = g_strdup_printf ("extract %s", pkg->pin->package);
      g_autoptr (GPtrArray) members = g_ptr_array_new_with_free_func (g_free);

      deb = airlock_kernel_pin_fetch (pkg->pin, testroot->arch, downloads_dir, NULL, progress,
                                      progress_data, error);
      if (!deb)
        return FALSE;
      if (progress)
        progress (stage, 0, 0, progress_data);
      /* dpkg-deb lists members as "./usr/bin/strace". */
      for (guint f = 0; pkg->files[f]; f++)
        g_ptr_array_add (members, g_strconcat ("./", pkg->files[f], NULL));
      g_ptr_array_add (members, NULL);
      if (!airlock_deb_extract (deb, dest, (const char *const *) members->pdata, what, error))
        return FALSE;
    }
  return TRUE;
}

static const AirlockInitramfsVariantKind testroot_kind = {
  "testroot", AIRLOCK_TESTROOT_BUILDER, AIRLOCK_TESTROOT_MANIFEST_FILE,
  AIRLOCK_TESTROOT_INITRAMFS_FILE,
};

/* testroot.json's own members: the programs, commands and packages. */
static void
describe_testroot (JsonBuilder *b, gpointer user_data)
{
  AirlockTestroot *testroot = user_data;

  json_builder_set_member_name (b, "programs");
  json_builder_begin_array (b);
  for (guint i = 0; i < testroot->programs->len; i++)
    {
      AirlockTestrootProgram *prog = testroot->programs->pdata[i];

      json_builder_begin_object (b);
      airlock_json_set_str (b, "name", prog->name);
      airlock_json_set_str (b, "path", prog->path);
      airlock_json_set_str (b, "sha256", prog->sha256);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "commands");
  json_builder_begin_array (b);
  for (guint i = 0; i < testroot->commands->len; i++)
    airlock_json_set_str (b, NULL, testroot->commands->pdata[i]);
  json_builder_end_array (b);
  json_builder_set_member_name (b, "packages");
  json_builder_begin_array (b);
  for (guint i = 0; i < testroot->packages->len; i++)
    {
      AirlockTestrootPackage *pkg = testroot->packages->pdata[i];

      json_builder_begin_object (b);
      airlock_json_set_str (b, "package", pkg->pin->package);
      airlock_json_set_str (b, "version", pkg->pin->version);
      airlock_json_set_str (b, "sha256", pkg->pin->sha256);
      json_builder_set_member_name (b, "files");
      json_builder_begin_array (b);
      for (guint f = 0; pkg->files[f]; f++)
        airlock_json_set_str (b, NULL, pkg->files[f]);
      json_builder_end_array (b);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
}

/* airlock_testroot_build() once the packages are extracted. */
static gboolean
write_testroot (AirlockTestroot *testroot, const char *key, const char *base_path,
                const char *base_sha256, const char *packages_dir, const char *dir,
                AirlockProgressFunc progress, gpointer progress_data, GError **error)
{
  g_autoptr (AirlockCpio) cpio = airlock_cpio_new ();

  return airlock_testroot_add_to (testroot, cpio, packages_dir, error)
         && airlock_initramfs_variant_write (&testroot_kind, cpio, key, testroot->arch,
                                             base_path, base_sha256, dir, describe_testroot,
                                             testroot, progress, progress_data, error);
}

gboolean
airlock_testroot_build (AirlockTestroot *testroot, const char *key, const char *base_path,
                        const char *base_sha256, const char *downloads_dir, const char *dir,
                        AirlockProgressFunc progress, gpointer progress_data, GError **error)
{
  g_autofree char *packages_dir = g_build_filename (dir, "packages", NULL);
  gboolean ok;

  /* The package files live in @dir only while the archive is written
   * (it maps them then): the cache keeps the archive, not them. */
  if (g_mkdir (packages_dir, 0755) < 0)
    {
      int saved_errno = errno;
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_FAILED,
                   "cannot create directory '%s': %s", packages_dir, g_strerror (saved_errno));
      return FALSE;
    }
  ok = airlock_testroot_extract_packages (testroot, downloads_dir, packages_dir, progress,
                                          progress_data, error)
       && write_testroot (testroot, key, base_path, base_sha256, packages_dir, dir, progress,
                          progress_data, error);
  airlock_rm_rf (packages_dir);
  return ok;
}

gboolean
airlock_testroot_cache_load (const char *dir, const char *key, char **ret_path, char **ret_sha256,
                             char **ret_why)
{
  return airlock_initramfs_variant_cache_load (&testroot_kind, dir, key, ret_path,
                                               ret_sha256, ret_why);
}
