/* Session, case and running case (case.h): the one place that turns "run
 * this image on this arch" into a run spec, a VM and an evidence bundle.
 * `airlock run`/`gate`, the GLib test integration and the benches all come
 * through here. */
#include "config.h"

#include "case/case-private.h"

#include "bundle/bundle.h"
#include "fsutil-private.h"
#include "image/remote-private.h"
#include "evidence/event.h"
#include "protocol.h"
#include "vm/vm-private.h"

#include <errno.h>
#include <gio/gunixinputstream.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

G_DEFINE_QUARK (airlock-case-error-quark, airlock_case_error)

gboolean
airlock_clock_from_string (const char *name, AirlockClock *ret_clock)
{
  if (g_strcmp0 (name, "warp") == 0)
    *ret_clock = AIRLOCK_CLOCK_WARP;
  else if (g_strcmp0 (name, "real") == 0)
    *ret_clock = AIRLOCK_CLOCK_REAL;
  else
    return FALSE;
  return TRUE;
}

const char *
airlock_clock_to_string (AirlockClock clock)
{
  return clock == AIRLOCK_CLOCK_REAL ? "real" : "warp";
}

#define DEFAULT_TIMEOUT_S 30
#define MAX_TIMEOUT_S 86400
/* Under the warped clock, how much of its own time the guest gives the
 * workload: six hours covers the daily and hourly timers of a program that
 * waits before it phones home, and costs ~15 s of wall time when the guest
 * sleeps through them (bench/clock).  A week at most. */
#define DEFAULT_GUEST_TIME_S (6 * 3600)
#define MAX_GUEST_TIME_S (7 * 86400)

/* Where the image's root is mounted in the guest, and the disk serial the
 * guest finds it by (guest/rootfs.c). */
#define IMAGE_ROOT "/airlock/image"
#define IMAGE_DISK_SERIAL "airlock-root"
/* Container runtimes give a PATH to an image that sets none. */
#define DEFAULT_PATH "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
/* The guest test programs (tests/guest): a fixed, minimal environment, so
 * nothing of the host or the guest's init leaks into what is measured. */
#define TESTROOT "/airlock/testroot"
static const char *const testroot_envp[] = {
  DEFAULT_PATH,
  "HOME=/root",
  NULL,
};
/* `airlock shell`: the image's own shell, or else airlock's static one
 * (AIRLOCK_SPEC_SHELL), from the shell variant of the guest image
 * (lib/guestimg/shell-private.h). */
static const char *const shell_argv[] = { "/bin/sh", NULL };
#define SHELL_DIR "/airlock/shell"


/* ---- session ---- */

struct _AirlockSession {
  AirlockArch arch;
  char *uri;
  char *cache_dir;
  AirlockAccel accel;
  guint boot_timeout_ms;
  AirlockClock clock;
  AirlockProgressFunc progress;
  gpointer progress_data;
  guint64 max_image_bytes;
  AirlockGuestImage *guest;          /* the plain guest image */
  AirlockGuestImage *guest_testroot; /* with the test programs, made when a case needs it */
  gboolean busy;                     /* a run is going */
  AirlockGuestImage *guest_shell;    /* with the static shell, made when a shell case needs it */
};

AirlockSession *
airlock_session_new (AirlockArch arch, const AirlockSessionOptions *options, GError **error)
{
  g_autoptr (AirlockSession) s = g_new0 (AirlockSession, 1);
  AirlockSessionOptions o = { 0 };
  AirlockGuestImageOptions img = { 0 };
  const char *qemu_env = g_getenv (arch == AIRLOCK_ARCH_AMD64 ? "AIRLOCK_QEMU_X86_64"
                                                             : "AIRLOCK_QEMU_AARCH64");
  const char *qemu = qemu_env && *qemu_env ? qemu_env
                     : arch == AIRLOCK_ARCH_AMD64 ? AIRLOCK_QEMU_X86_64 : AIRLOCK_QEMU_AARCH64;
  g_autofree char *qemu_path = NULL;

  if (options)
    o = *options;
  s->arch = arch;
  s->uri = g_strdup (o.uri);
  s->cache_dir = o.cache_dir ? g_strdup (o.cache_dir) : airlock_default_cache_dir ();
  s->accel = o.accel;
  s->boot_timeout_ms = o.boot_timeout_ms;
  s->clock = o.icount ? AIRLOCK_CLOCK_WARP : o.clock;
  s->progress = o.progress;
  s->progress_data = o.progress_data;
  s->max_image_bytes = o.max_image_bytes;

  /* Only a local hypervisor needs our QEMU; a remote URI brings its own. */
  qemu_path = g_path_is_absolute (qemu) ? g_strdup (qemu) : g_find_program_in_path (qemu);
  if ((!s->uri || g_str_has_prefix (s->uri, "qemu:///"))
      && (!qemu_path || !g_file_test (qemu_path, G_FILE_TEST_IS_EXECUTABLE)))
    {
      g_set_error (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_EMULATOR,
                   "cannot run %s guests here: '%s' is not installed (Debian: apt-get install %s)",
                   airlock_arch_to_string (arch), qemu,
                   arch == AIRLOCK_ARCH_AMD64 ? "qemu-system-x86" : "qemu-system-arm");
      return NULL;
    }
  img.cache_dir = s->cache_dir;
  img.progress = s->progress;
  img.progress_data = s->progress_data;
  s->guest = airlock_guest_image_ensure (arch, &img, error);
  if (!s->guest)
    return NULL;
  return g_steal_pointer (&s);
}

gboolean
airlock_session_error_cannot_run_here (const GError *error)
{
  return g_error_matches (error, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_EMULATOR)
         || g_error_matches (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_UNAVAILABLE);
}

void
airlock_session_free (AirlockSession *session)
{
  if (!session)
    return;
  airlock_guest_image_free (session->guest);
  airlock_guest_image_free (session->guest_testroot);
  airlock_guest_image_free (session->guest_shell);
  g_free (session->uri);
  g_free (session->cache_dir);
  g_free (session);
}

AirlockArch
airlock_session_get_arch (AirlockSession *session)
{
  return session->arch;
}

const AirlockGuestImage *
airlock_session_get_guest_image (AirlockSession *session)
{
  return session->guest;
}

/* ---- case ---- */

typedef void (*OutputFunc) (int stream, const guint8 *data, gsize len, gpointer user_data);
typedef void (*EventFunc) (const AirlockEvent *event, const AirlockEvent *call, gpointer user_data);

struct _AirlockCase {
  char *name;
  char *image_ref;
  char *guest_program;
  GStrv args;
  GPtrArray *env_names;     /* char *, in order set */
  GPtrArray *env_values;    /* char * or NULL (unset) */
  GBytes *stdin_bytes;
  GInputStream *stdin_stream;
  guint timeout_s;
  guint guest_time_s;       /* under the warped clock */
  gboolean controls;
  AirlockPolicy *policy;
  char *bundle_dir;
  GBytes *key;
  char *bundle_gate;        /* the gate's set id its manifest names, or NULL */
  char *test_mode;
  guint64 clock_ns;
  OutputFunc output_func;
  gpointer output_data;
  gboolean shell;           /* the image's /bin/sh (or airlock's static shell), not its command */
  gboolean tty;             /* the workload's stdio is a terminal of tty_rows x tty_cols */
  guint16 tty_rows, tty_cols;
  EventFunc event_func;
  gpointer event_data;
  GPtrArray *serve;         /* Fixture *: what admitted names answer */
};

typedef struct {
  char *name;               /* lowercased, absolute: "pypi.org." */
  guint16 port;
  GBytes *response;
} Fixture;

static void
fixture_free (gpointer data)
{
  Fixture *f = data;

  g_free (f->name);
  g_bytes_unref (f->response);
  g_free (f);
}

AirlockCase *
airlock_case_new (const char *image_ref)
{
  AirlockCase *c = g_new0 (AirlockCase, 1);

  c->image_ref = g_strdup (image_ref);
  c->env_names = g_ptr_array_new_with_free_func (g_free);
  c->env_values = g_ptr_array_new_with_free_func (g_free);
  c->timeout_s = DEFAULT_TIMEOUT_S;
  c->guest_time_s = DEFAULT_GUEST_TIME_S;
  c->controls = TRUE;
  c->policy = airlock_policy_new_default ();
  c->serve = g_ptr_array_new_with_free_func (fixture_free);
  return c;
}

void
airlock_case_free (AirlockCase *c)
{
  if (!c)
    return;
  g_free (c->name);
  g_free (c->image_ref);
  g_free (c->guest_program);
  g_strfreev (c->args);
  g_ptr_array_unref (c->env_names);
  g_ptr_array_unref (c->env_values);
  g_clear_pointer (&c->stdin_bytes, g_bytes_unref);
  g_clear_object (&c->stdin_stream);
  airlock_policy_free (c->policy);
  g_free (c->bundle_dir);
  g_clear_pointer (&c->key, g_bytes_unref);
  g_free (c->bundle_gate);
  g_free (c->test_mode);
  g_ptr_array_unref (c->serve);
  g_free (c);
}

/* A policy's copy, through the text that parses back to it. */
static AirlockPolicy *
policy_copy (const AirlockPolicy *policy)
{
  g_autofree char *text = airlock_policy_to_text (policy);
  AirlockPolicy *copy = airlock_policy_parse (text, strlen (text), "policy", NULL);

  /* Our own rules as written always parse again. */
  g_assert (copy != NULL);
  return copy;
}

static AirlockCase *
case_copy (const AirlockCase *c)
{
  AirlockCase *d = airlock_case_new (c->image_ref);

  d->name = g_strdup (c->name);
  d->guest_program = g_strdup (c->guest_program);
  d->args = g_strdupv (c->args);
  for (guint i = 0; i < c->env_names->len; i++)
    {
      g_ptr_array_add (d->env_names, g_strdup (c->env_names->pdata[i]));
      g_ptr_array_add (d->env_values, g_strdup (c->env_values->pdata[i]));
    }
  d->stdin_bytes = c->stdin_bytes ? g_bytes_ref (c->stdin_bytes) : NULL;
  d->stdin_stream = c->stdin_stream ? g_object_ref (c->stdin_stream) : NULL;
  d->timeout_s = c->timeout_s;
  d->guest_time_s = c->guest_time_s;
  d->controls = c->controls;
  airlock_policy_free (d->policy);
  d->policy = policy_copy (c->policy);
  d->bundle_dir = g_strdup (c->bundle_dir);
  d->key = c->key ? g_bytes_ref (c->key) : NULL;
  d->bundle_gate = g_strdup (c->bundle_gate);
  d->test_mode = g_strdup (c->test_mode);
  d->clock_ns = c->clock_ns;
  for (guint i = 0; i < c->serve->len; i++)
    {
      const Fixture *f = g_ptr_array_index (c->serve, i);
      airlock_case_serve (d, f->name, f->port, f->response);
    }
  d->output_func = c->output_func;
  d->output_data = c->output_data;
  d->shell = c->shell;
  d->tty = c->tty;
  d->tty_rows = c->tty_rows;
  d->tty_cols = c->tty_cols;
  d->event_func = c->event_func;
  d->event_data = c->event_data;
  return d;
}

void
airlock_case_set_name (AirlockCase *c, const char *name)
{
  g_free (c->name);
  c->name = g_strdup (name);
}

void
airlock_case_set_args (AirlockCase *c, const char *const *args)
{
  g_strfreev (c->args);
  c->args = args && args[0] ? g_strdupv ((GStrv) args) : NULL;
}

void
airlock_case_set_env (AirlockCase *c, const char *name, const char *value)
{
  for (guint i = 0; i < c->env_names->len; i++)
    if (g_strcmp0 (c->env_names->pdata[i], name) == 0)
      {
        g_free (c->env_values->pdata[i]);
        c->env_values->pdata[i] = g_strdup (value);
        return;
      }
  g_ptr_array_add (c->env_names, g_strdup (name));
  g_ptr_array_add (c->env_values, g_strdup (value));
}

void
airlock_case_set_stdin_bytes (AirlockCase *c, GBytes *data)
{
  g_clear_object (&c->stdin_stream);
  g_clear_pointer (&c->stdin_bytes, g_bytes_unref);
  c->stdin_bytes = data ? g_bytes_ref (data) : NULL;
}

void
airlock_case_set_stdin_stream (AirlockCase *c, GInputStream *stream)
{
  g_clear_pointer (&c->stdin_bytes, g_bytes_unref);
  g_clear_object (&c->stdin_stream);
  c->stdin_stream = stream ? g_object_ref (stream) : NULL;
}

void
airlock_case_set_timeout (AirlockCase *c, guint seconds)
{
  c->timeout_s = seconds;
}

void
airlock_case_set_guest_time (AirlockCase *c, guint seconds)
{
  c->guest_time_s = seconds;
}

void
airlock_case_set_controls (AirlockCase *c, gboolean controls)
{
  c->controls = controls;
}

gboolean
airlock_case_allow (AirlockCase *c, const char *rules, const char *name, GError **error)
{
  return airlock_policy_append (c->policy, rules, strlen (rules), name ? name : "rules", error);
}

gboolean
airlock_case_load_policy (AirlockCase *c, const char *path, GError **error)
{
  g_autoptr (AirlockPolicy) loaded = airlock_policy_load (path, error);
  g_autofree char *text = NULL;

  if (!loaded)
    return FALSE;
  text = airlock_policy_to_text (loaded);
  return airlock_policy_append (c->policy, text, strlen (text), path, error);
}

void
airlock_case_set_policy (AirlockCase *c, const AirlockPolicy *policy)
{
  airlock_policy_free (c->policy);
  c->policy = policy_copy (policy);
}

void
airlock_case_set_bundle_dir (AirlockCase *c, const char *dir)
{
  g_free (c->bundle_dir);
  c->bundle_dir = g_strdup (dir);
}

void
airlock_case_set_bundle_key (AirlockCase *c, GBytes *key)
{
  g_clear_pointer (&c->key, g_bytes_unref);
  c->key = key ? g_bytes_ref (key) : NULL;
}

void
airlock_case_set_bundle_gate (AirlockCase *c, const char *gate_id)
{
  g_free (c->bundle_gate);
  c->bundle_gate = g_strdup (gate_id);
}

void
airlock_case_set_test_mode (AirlockCase *c, const char *mode)
{
  g_free (c->test_mode);
  c->test_mode = g_strdup (mode);
}

void
airlock_case_set_clock (AirlockCase *c, guint64 clock_ns)
{
  c->clock_ns = clock_ns;
}

char *
airlock_case_fixture_line (const char *name, guint16 port, const char *sha256_hex)
{
  g_autofree char *lower = g_ascii_strdown (name, -1);

  return g_strdup_printf ("%s%s:%u sha256:%s", lower, g_str_has_suffix (lower, ".") ? "" : ".",
                          port, sha256_hex);
}

gboolean
airlock_case_serve (AirlockCase *c, const char *name, guint16 port, GBytes *response)
{
  g_autofree char *lower = NULL;
  Fixture *f;

  g_return_val_if_fail (name && response, FALSE);
  if (!*name || port == 0 || strpbrk (name, ":=/ \t\n") || strlen (name) > 254)
    return FALSE;
  lower = g_ascii_strdown (name, -1);
  /* A later fixture for the same name and port replaces the earlier. */
  f = g_new0 (Fixture, 1);
  f->name = g_str_has_suffix (lower, ".") ? g_steal_pointer (&lower)
                                          : g_strconcat (lower, ".", NULL);
  for (guint i = 0; i < c->serve->len; i++)
    {
      const Fixture *o = g_ptr_array_index (c->serve, i);
      if (o->port == port && g_str_equal (o->name, f->name))
        g_ptr_array_remove_index (c->serve, i--);
    }
  f->port = port;
  f->response = g_bytes_ref (response);
  g_ptr_array_add (c->serve, f);
  return TRUE;
}

void
airlock_case_set_guest_program (AirlockCase *c, const char *name)
{
  g_free (c->guest_program);
  c->guest_program = g_strdup (name);
}

void
airlock_case_set_output_func (AirlockCase *c, OutputFunc func, gpointer user_data)
{
  c->output_func = func;
  c->output_data = user_data;
}

const char *
airlock_case_get_image_ref (const AirlockCase *c)
{
  return c->image_ref;
}

/* ---- a running case ---- */

struct _AirlockRun {
  AirlockSession *session;       /* borrowed */
  AirlockCase *c;                /* our copy */
  const AirlockGuestImage *guest;
  AirlockImageSource *source;
  AirlockImage *image;
  char *disk;
  GStrv argv;
  GPtrArray *envp;               /* char *, NULL-terminated */
  AirlockVm *vm;
  AirlockBundle *bundle;
  char *bundle_error;
  GThread *thread;
  gboolean vm_ok;
  GError *vm_error;
  gint64 started_real_us;

  int stdin_fd;                  /* our end of the stdin socket, or -1 */
  char *serve_dir;               /* the case's fixtures as files for the sinkhole, or NULL */
  GStrv serve;                   /* "NAME:PORT=FILE" for the VM */
  GInputStream *stdin_in;        /* the VM's end */

  GMutex lock;
  GCond cond;
  GByteArray *out;               /* stdout as it arrived */
  gsize out_read;                /* bytes read_line() handed out */
  gboolean ended;
};

static void
run_output (int stream, const guint8 *data, gsize len, gpointer user_data)
{
  AirlockRun *run = user_data;

  if (stream == AIRLOCK_STDIO_STDOUT)
    {
      g_mutex_lock (&run->lock);
      /* read_line() is for conversations, bounded like the VM's copy. */
      if (run->out->len + len <= 16 * 1024 * 1024)
        g_byte_array_append (run->out, data, (guint) len);
      g_cond_broadcast (&run->cond);
      g_mutex_unlock (&run->lock);
    }
  if (run->c->output_func)
    run->c->output_func (stream, data, len, run->c->output_data);
}

static gpointer
run_thread (gpointer data)
{
  AirlockRun *run = data;
  GError *error = NULL;
  gboolean ok = airlock_vm_run (run->vm, &error);

  g_mutex_lock (&run->lock);
  run->vm_ok = ok;
  run->vm_error = error;
  run->ended = TRUE;
  g_cond_broadcast (&run->cond);
  g_mutex_unlock (&run->lock);
  return NULL;
}

static gboolean
valid_env_name (const char *name)
{
  return name && *name && !strchr (name, '=');
}

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

static gboolean prepare_shell (AirlockRun *run, GError **error);

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

AirlockRun *
airlock_session_start (AirlockSession *session, const AirlockCase *c, GError **error)
{
  g_autoptr (AirlockRun) run = g_new0 (AirlockRun, 1);
  AirlockRunSpec spec = { 0 };
  AirlockVmOptions vm_opts = { 0 };
  int sv[2];

  g_return_val_if_fail (session != NULL && c != NULL, NULL);
  run->stdin_fd = -1;
  g_mutex_init (&run->lock);
  g_cond_init (&run->cond);
  run->out = g_byte_array_new ();
  run->session = session;
  run->c = case_copy (c);
  run->guest = session->guest;
  run->envp = g_ptr_array_new_with_free_func (g_free);

  if (session->busy)
    {
      g_set_error (error, AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_INVALID,
                   "the %s session is running a case already (one at a time)",
                   airlock_arch_to_string (session->arch));
      return NULL;
    }
  if (!run->c->image_ref == !run->c->guest_program)
    {
      g_set_error (error, AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_INVALID,
                   "a case runs an image reference (or, in airlock's own tests, a guest program)");
      return NULL;
    }
  if (run->c->timeout_s == 0 || run->c->timeout_s > MAX_TIMEOUT_S)
    {
      g_set_error (error, AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_INVALID,
                   "invalid timeout %u s for case '%s': it must be 1 to %u seconds",
                   run->c->timeout_s, run->c->name ? run->c->name : run->c->image_ref,
                   MAX_TIMEOUT_S);
      return NULL;
    }
  if (session->clock == AIRLOCK_CLOCK_WARP
      && (run->c->guest_time_s == 0 || run->c->guest_time_s > MAX_GUEST_TIME_S))
    {
      g_set_error (error, AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_INVALID,
                   "invalid guest time %u s for case '%s': it must be 1 to %u seconds",
                   run->c->guest_time_s, run->c->name ? run->c->name : run->c->image_ref,
                   MAX_GUEST_TIME_S);
      return NULL;
    }
  for (guint k = 0; k < run->c->env_names->len; k++)
    if (!valid_env_name (run->c->env_names->pdata[k]))
      {
        g_set_error (error, AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_INVALID,
                     "invalid environment variable name '%s': it must be non-empty, without '='",
                     (const char *) run->c->env_names->pdata[k]);
        return NULL;
      }
  if (run->c->shell && run->c->guest_program)
    {
      g_set_error (error, AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_INVALID,
                   "a shell runs in an image, not in the guest test programs' root");
      return NULL;
    }
  if (run->c->guest_program ? !prepare_guest_program (run, error) : !prepare_image (run, error))
    return NULL;
  if (run->c->shell && !prepare_shell (run, error))
    return NULL;
  if (!prepare_serve (run, error))
    return NULL;
  g_ptr_array_add (run->envp, NULL);

  spec.argv = (const char *const *) run->argv;
  spec.envp = (const char *const *) run->envp->pdata;
  /* The guest's own limit: under the warped clock its time runs ahead of
   * ours, so it gets the guest time and we keep the timeout (the VM's
   * wall_timeout_ms). */
  spec.timeout_ms = (session->clock == AIRLOCK_CLOCK_WARP ? run->c->guest_time_s
                                                          : run->c->timeout_s) * 1000;
  spec.hostname = "airlock";
  spec.stdio = TRUE;
  spec.controls = run->c->controls;
  spec.clock_ns = run->c->clock_ns;
  spec.tty = run->c->tty;
  spec.tty_rows = run->c->tty_rows;
  spec.tty_cols = run->c->tty_cols;
  spec.shell_dir = run->c->shell ? SHELL_DIR : NULL;
  if (run->image)
    {
      spec.root = IMAGE_ROOT;
      spec.root_disk = IMAGE_DISK_SERIAL;
      spec.cwd = run->image->working_dir && *run->image->working_dir ? run->image->working_dir : NULL;
      spec.user = run->image->user && *run->image->user ? run->image->user : NULL;
    }
  else
    {
      spec.root = TESTROOT;
      spec.cwd = "/";
    }

  vm_opts.uri = session->uri;
  vm_opts.cache_dir = session->cache_dir;
  vm_opts.accel = session->accel;
  vm_opts.boot_timeout_ms = session->boot_timeout_ms;
  vm_opts.clock_warp = session->clock == AIRLOCK_CLOCK_WARP;
  vm_opts.wall_timeout_ms = run->c->timeout_s * 1000;
  vm_opts.test_mode = run->c->test_mode;
  vm_opts.serve = (const char *const *) run->serve;
  vm_opts.spec = &spec;
  vm_opts.root_disk_path = run->disk;
  vm_opts.output_func = run_output;
  vm_opts.output_data = run;
  vm_opts.event_func = run->c->event_func;
  vm_opts.event_data = run->c->event_data;
  if (run->c->stdin_bytes)
    vm_opts.stdin_data = run->c->stdin_bytes;
  else if (run->c->stdin_stream)
    vm_opts.stdin_stream = run->c->stdin_stream;
  else
    {
      /* A socket rather than a pipe: a write after the VM's end is gone
       * fails with EPIPE under MSG_NOSIGNAL instead of killing us. */
      if (socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        {
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno),
                       "cannot make the workload's stdin: %s", g_strerror (errno));
          return NULL;
        }
      run->stdin_fd = sv[0];
      run->stdin_in = g_unix_input_stream_new (sv[1], TRUE);
      vm_opts.stdin_stream = run->stdin_in;
    }

  if (run->c->bundle_dir)
    {
      g_autoptr (GError) local = NULL;

      /* Refused before the boot, not when the bundle is signed after it. */
      if (run->c->key && !airlock_bundle_key_check (run->c->key, "the bundle key", &local))
        {
          g_set_error (error, AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_INVALID, "%s", local->message);
          return NULL;
        }
      run->bundle = airlock_bundle_create (run->c->bundle_dir, &local);
      if (!run->bundle)
        {
          g_set_error (error, AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_BUNDLE, "%s", local->message);
          return NULL;
        }
      vm_opts.record_func = airlock_bundle_record;
      vm_opts.record_data = run->bundle;
    }

  run->vm = airlock_vm_new (session->arch, run->guest, &vm_opts, error);
  if (!run->vm)
    {
      if (run->bundle)
        airlock_bundle_abandon (run->bundle, error && *error ? (*error)->message
                                                             : "the VM could not be prepared");
      return NULL;
    }
  session->busy = TRUE;
  run->started_real_us = g_get_real_time ();
  run->thread = g_thread_new ("airlock-case", run_thread, run);
  return g_steal_pointer (&run);
}

gboolean
airlock_run_write_stdin (AirlockRun *run, const void *data, gsize len, GError **error)
{
  const guint8 *p = data;

  if (run->stdin_fd < 0)
    {
      g_set_error (error, AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_CLOSED,
                   run->c->stdin_bytes || run->c->stdin_stream
                       ? "the case has stdin of its own"
                       : "the workload's stdin is closed");
      return FALSE;
    }
  while (len > 0)
    {
      struct pollfd pfd = { .fd = run->stdin_fd, .events = POLLOUT };
      ssize_t n;
      gboolean ended;

      g_mutex_lock (&run->lock);
      ended = run->ended;
      g_mutex_unlock (&run->lock);
      if (ended)
        {
          g_set_error (error, AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_CLOSED,
                       "the run has ended: the workload's stdin is gone");
          return FALSE;
        }
      /* Wake now and then to notice the run's end: a workload that stops
       * reading must not hang the test that writes to it. */
      if (poll (&pfd, 1, 200) <= 0)
        continue;
      n = send (run->stdin_fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n < 0 && (errno == EINTR || errno == EAGAIN))
        continue;
      if (n < 0)
        {
          g_set_error (error, AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_CLOSED,
                       "cannot write to the workload's stdin: %s", g_strerror (errno));
          return FALSE;
        }
      p += n;
      len -= (gsize) n;
    }
  return TRUE;
}

void
airlock_run_close_stdin (AirlockRun *run)
{
  if (run->stdin_fd >= 0)
    {
      close (run->stdin_fd);
      run->stdin_fd = -1;
    }
}

char *
airlock_run_read_line (AirlockRun *run, guint timeout_ms, GError **error)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) timeout_ms * 1000;
  char *line = NULL;

  g_mutex_lock (&run->lock);
  for (;;)
    {
      const guint8 *start = run->out->data + run->out_read;
      gsize avail = run->out->len - run->out_read;
      const guint8 *nl = avail ? memchr (start, '\n', avail) : NULL;

      if (nl)
        {
          line = g_strndup ((const char *) start, (gsize) (nl - start));
          run->out_read += (gsize) (nl - start) + 1;
          break;
        }
      if (run->ended)
        {
          if (avail)
            {
              line = g_strndup ((const char *) start, avail);
              run->out_read += avail;
            }
          else
            g_set_error (error, AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_CLOSED,
                         "the workload's stdout ended");
          break;
        }
      if (!g_cond_wait_until (&run->cond, &run->lock, deadline))
        {
          g_set_error (error, AIRLOCK_CASE_ERROR, AIRLOCK_CASE_ERROR_TIMEOUT,
                       "no line on the workload's stdout within %u ms", timeout_ms);
          break;
        }
    }
  g_mutex_unlock (&run->lock);
  return line;
}

AirlockResult *
airlock_run_wait (AirlockRun *run, GError **error)
{
  AirlockVerdict *verdict;
  AirlockRunRecord *record;
  AirlockResult *result;

  g_return_val_if_fail (run->thread != NULL, NULL);
  airlock_run_close_stdin (run);
  g_thread_join (run->thread);
  run->thread = NULL;
  run->session->busy = FALSE;
  if (!run->vm_ok)
    {
      /* Nothing to judge: the bundle keeps what it has, marked. */
      if (run->bundle)
        airlock_bundle_abandon (run->bundle, run->vm_error ? run->vm_error->message
                                                           : "the VM did not start");
      g_propagate_error (error, g_steal_pointer (&run->vm_error));
      return NULL;
    }
  record = airlock_vm_get_record (run->vm);
  verdict = airlock_verdict_compute (record, run->c->policy);
  if (run->bundle)
    {
      g_autoptr (GError) local = NULL;
      g_autoptr (GPtrArray) env_set = g_ptr_array_new_with_free_func (g_free);
      g_autoptr (GPtrArray) serve = g_ptr_array_new_with_free_func (g_free);
      AirlockBundleInput in = {
        .arch = run->session->arch,
        .case_name = run->c->name,
        .args = (const char *const *) run->c->args,
        .clock_ns = run->c->clock_ns,
        .icount = run->session->clock == AIRLOCK_CLOCK_WARP,
        .shell = run->c->shell,
        .tty = run->c->tty,
        .guest_program = run->c->guest_program,
        .image = run->image,
        .guest = run->guest,
        .record = record,
        .argv = (const char *const *) run->argv,
        .envp = (const char *const *) run->envp->pdata,
        .cwd = run->image ? run->image->working_dir : "/",
        .user = run->image ? run->image->user : NULL,
        .timeout_ms = run->c->timeout_s * 1000,
        .controls = run->c->controls,
        .policy = run->c->policy,
        .verdict = verdict,
        .key = run->c->key,
        .gate_id = run->c->bundle_gate,
        .started_real_us = run->started_real_us,
        .finished_real_us = g_get_real_time (),
      };

      for (guint k = 0; k < run->c->env_names->len; k++)
        g_ptr_array_add (env_set, run->c->env_values->pdata[k]
                                      ? g_strdup_printf ("%s=%s", (char *) run->c->env_names->pdata[k],
                                                         (char *) run->c->env_values->pdata[k])
                                      : g_strdup (run->c->env_names->pdata[k]));
      g_ptr_array_add (env_set, NULL);
      in.env_set = (const char *const *) env_set->pdata;
      /* What each fixture was, so a replay can be given the same bytes. */
      for (guint k = 0; k < run->c->serve->len; k++)
        {
          const Fixture *fx = g_ptr_array_index (run->c->serve, k);
          g_autofree char *sum = g_compute_checksum_for_bytes (G_CHECKSUM_SHA256, fx->response);

          g_ptr_array_add (serve, airlock_case_fixture_line (fx->name, fx->port, sum));
        }
      g_ptr_array_add (serve, NULL);
      in.serve = serve->len > 1 ? (const char *const *) serve->pdata : NULL;

      if (!airlock_bundle_finish (run->bundle, &in, &local))
        run->bundle_error = g_strdup (local->message);
    }
  /* The record is the run from here on: the VM (its domain long gone)
   * goes now. */
  g_clear_pointer (&run->vm, airlock_vm_free);
  result = airlock_result_new (run->session->arch, run->c->name, g_steal_pointer (&run->image),
                               verdict, record);
  if (run->bundle)
    airlock_result_set_bundle (result, airlock_bundle_get_dir (run->bundle), run->bundle_error);
  return result;
}

void
airlock_run_free (AirlockRun *run)
{
  if (!run)
    return;
  airlock_run_close_stdin (run);
  if (run->thread)
    {
      /* Not waited for: the run goes to its end (the guest's timeout
       * bounds it) so the VM is torn down, never leaked. */
      g_thread_join (run->thread);
      run->session->busy = FALSE;
    }
  airlock_vm_free (run->vm);
  airlock_bundle_free (run->bundle);
  g_free (run->bundle_error);
  g_clear_error (&run->vm_error);
  g_clear_object (&run->stdin_in);
  airlock_image_free (run->image);
  airlock_image_source_free (run->source);
  g_free (run->disk);
  if (run->serve_dir)
    airlock_rm_rf (run->serve_dir);
  g_free (run->serve_dir);
  g_strfreev (run->serve);
  g_strfreev (run->argv);
  if (run->envp)
    g_ptr_array_unref (run->envp);
  g_byte_array_unref (run->out);
  g_mutex_clear (&run->lock);
  g_cond_clear (&run->cond);
  airlock_case_free (run->c);
  g_free (run);
}

AirlockResult *
airlock_session_run (AirlockSession *session, const AirlockCase *c, GError **error)
{
  g_autoptr (AirlockRun) run = airlock_session_start (session, c, error);

  if (!run)
    return NULL;
  return airlock_run_wait (run, error);
}

AirlockVm *
airlock_run_get_vm (AirlockRun *run)
{
  return run->vm;
}

const AirlockImage *
airlock_run_get_image (AirlockRun *run)
{
  return run->image;
}

const char *const *
airlock_run_get_argv (AirlockRun *run)
{
  return (const char *const *) run->argv;
}

/* ---- `airlock shell` ---- */

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

void
airlock_case_set_shell (AirlockCase *c, gboolean shell)
{
  c->shell = shell;
}

void
airlock_case_set_tty (AirlockCase *c, gboolean tty, guint16 rows, guint16 cols)
{
  c->tty = tty;
  c->tty_rows = rows;
  c->tty_cols = cols;
}

void
airlock_case_set_event_func (AirlockCase *c, EventFunc func, gpointer user_data)
{
  c->event_func = func;
  c->event_data = user_data;
}
