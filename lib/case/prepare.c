/* What a run runs (see case-state-private.h): an image's command, env,
 * cwd and user for the session's arch, and its root disk; or a guest test
 * program in the testroot; or, for `airlock shell`, the image's /bin/sh on
 * the shell variant of the guest image; and the case's fixtures as files
 * for the sinkhole. */
#include "config.h"

#include "case/case-state-private.h"

#include "image/remote-private.h"

#include <string.h>

/* Container runtimes give a PATH to an image that sets none. */
#define DEFAULT_PATH "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
/* The guest test programs (tests/guest): a fixed, minimal environment, so
 * nothing of the host or the guest's init leaks into what is measured. */
static const char *const testroot_envp[] = {
  DEFAULT_PATH,
  "HOME=/root",
  NULL,
};
/* `airlock shell`: the image's own shell, or else airlock's static one
 * (SHELL_DIR). */
static const char *const shell_argv[] = { "/bin/sh", NULL };

/* The image's command, env, cwd and user for this arch. */
static gboolean
prepare_image (AirlockRun *run, GError **error)
{
  AirlockCase *c = run->c;
  AirlockImageDiskOptions disk_opts = {
    .cache_dir = run->session->cache_dir,
    .progress = run->session->progress,
    .progress_data = run->session->progress_data,
    .max_image_bytes = run->session->max_image_bytes,
  };
  gboolean have_path = FALSE;

  run->source = airlock_image_source_open_cached (c->image_ref, run->session->cache_dir, error);
  if (!run->source)
    return FALSE;
  run->image = airlock_image_resolve (run->source, run->session->arch, error);
  if (!run->image)
    return FALSE;
  run->argv = c->shell ? g_strdupv ((GStrv) shell_argv)
                       : airlock_image_command (run->image, (const char *const *) c->args, error);
  if (!run->argv)
    return FALSE;
  for (guint i = 0; run->image->env && run->image->env[i]; i++)
    {
      const char *entry = run->image->env[i];
      gsize name_len = strcspn (entry, "=");
      gboolean overridden = FALSE;

      for (guint k = 0; k < c->env_names->len; k++)
        overridden = overridden
                     || (strlen (c->env_names->pdata[k]) == name_len
                         && strncmp (c->env_names->pdata[k], entry, name_len) == 0);
      if (overridden)
        continue;
      have_path = have_path || g_str_has_prefix (entry, "PATH=");
      g_ptr_array_add (run->envp, g_strdup (entry));
    }
  for (guint k = 0; k < c->env_names->len; k++)
    if (c->env_values->pdata[k])
      {
        have_path = have_path || g_str_equal (c->env_names->pdata[k], "PATH");
        g_ptr_array_add (run->envp, g_strdup_printf ("%s=%s", (char *) c->env_names->pdata[k],
                                                     (char *) c->env_values->pdata[k]));
      }
  if (!have_path)
    g_ptr_array_insert (run->envp, 0, g_strdup (DEFAULT_PATH));
  run->disk = airlock_image_disk_ensure (run->source, run->image, &disk_opts, error);
  return run->disk != NULL;
}

static gboolean
prepare_guest_program (AirlockRun *run, GError **error)
{
  AirlockCase *c = run->c;
  AirlockSession *s = run->session;
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();

  if (!*c->guest_program || strchr (c->guest_program, '/') || g_str_equal (c->guest_program, ".")
      || g_str_equal (c->guest_program, ".."))
    {
      g_set_error (error, AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_INVALID,
                   "invalid guest program '%s': the NAME of a program in the testroot's /bin",
                   c->guest_program);
      return FALSE;
    }
  if (!s->guest_testroot)
    {
      AirlockGuestImageOptions img = {
        .cache_dir = s->cache_dir,
        .with_testroot = TRUE,
        .progress = s->progress,
        .progress_data = s->progress_data,
      };

      s->guest_testroot = airlock_guest_image_ensure (s->arch, &img, error);
      if (!s->guest_testroot)
        return FALSE;
    }
  run->guest = s->guest_testroot;
  g_ptr_array_add (argv, g_strconcat ("/bin/", c->guest_program, NULL));
  for (guint i = 0; c->args && c->args[i]; i++)
    g_ptr_array_add (argv, g_strdup (c->args[i]));
  g_ptr_array_add (argv, NULL);
  run->argv = (GStrv) g_ptr_array_steal (argv, NULL);
  for (guint i = 0; testroot_envp[i]; i++)
    g_ptr_array_add (run->envp, g_strdup (testroot_envp[i]));
  return TRUE;
}

/* A shell case boots the shell variant of the guest image: the base one
 * with airlock's static shell at SHELL_DIR, for an image without its own
 * (the guest decides, in the image's root). */
static gboolean
prepare_shell (AirlockRun *run, GError **error)
{
  AirlockSession *s = run->session;

  if (!s->guest_shell)
    {
      AirlockGuestImageOptions img = {
        .cache_dir = s->cache_dir,
        .with_shell = TRUE,
        .progress = s->progress,
        .progress_data = s->progress_data,
      };

      s->guest_shell = airlock_guest_image_ensure (s->arch, &img, error);
      if (!s->guest_shell)
        return FALSE;
    }
  run->guest = s->guest_shell;
  return TRUE;
}

/* The case's fixtures as files the sinkhole process reads when it starts
 * (it reads each once, before the guest runs), in a private directory
 * removed with the run. */
static gboolean
prepare_serve (AirlockRun *run, GError **error)
{
  g_autoptr (GPtrArray) specs = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (GError) local = NULL;

  if (run->c->serve->len == 0)
    return TRUE;
  run->serve_dir = g_dir_make_tmp ("airlock-serve-XXXXXX", &local);
  if (!run->serve_dir)
    {
      g_set_error (error, AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_INVALID,
                   "cannot write the case's fixtures: %s", local->message);
      return FALSE;
    }
  for (guint i = 0; i < run->c->serve->len; i++)
    {
      const Fixture *f = g_ptr_array_index (run->c->serve, i);
      g_autofree char *file = g_strdup_printf ("%s/%u", run->serve_dir, i);

      if (!g_file_set_contents_full (file, g_bytes_get_data (f->response, NULL),
                                     (gssize) g_bytes_get_size (f->response),
                                     G_FILE_SET_CONTENTS_NONE, 0600, &local))
        {
          g_set_error (error, AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_INVALID,
                       "cannot write the fixture for %s port %u: %s", f->name, f->port,
                       local->message);
          return FALSE;
        }
      g_ptr_array_add (specs, g_strdup_printf ("%s:%u=%s", f->name, f->port, file));
    }
  g_ptr_array_add (specs, NULL);
  run->serve = (GStrv) g_ptr_array_free (g_steal_pointer (&specs), FALSE);
  return TRUE;
}

gboolean
airlock_run_prepare (AirlockRun *run, GError **error)
{
  if (run->c->guest_program ? !prepare_guest_program (run, error) : !prepare_image (run, error))
    return FALSE;
  if (run->c->shell && !prepare_shell (run, error))
    return FALSE;
  if (!prepare_serve (run, error))
    return FALSE;
  g_ptr_array_add (run->envp, NULL);
  return TRUE;
}
