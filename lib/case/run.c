/* A running case (case.h): the run spec for what prepare.c found, the VM
 * in a thread of its own, the workload's stdin over a socket pair and its
 * stdout as lines; then the wait: the verdict over the run's record, and
 * the evidence bundle finished.  `airlock run`/`gate`, the GLib test
 * integration and the benches all come through here. */
#include "config.h"

#include "case/case-state-private.h"

#include "case/hosts-private.h"

#include "fsutil-private.h"
#include "evidence/event.h"
#include "protocol.h"
#include "vm/vm-private.h"

#include <errno.h>
#include <gio/gunixinputstream.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

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

/* Gives the run's slot on its pool host back, once. */
static void
release_host (AirlockRun *run)
{
  if (run->host_held)
    airlock_hosts_release (run->host);
  run->host_held = FALSE;
}

/* Another host of the pool that can run the run's arch, not its own (a
 * slot held there), or NULL. */
static char *
acquire_other_host (AirlockRun *run, GError **error)
{
  return airlock_hosts_acquire ((const char *const *) run->session->uris,
                                run->session->host_slots, run->session->cache_dir,
                                run->session->arch, run->host, error);
}

/* The run moves to @other (acquire_other_host()'s, taken), its own host's
 * slot given back; @why (taken) says what the first host did. */
static void
move_to_host (AirlockRun *run, char *other, char *why)
{
  run->host_failed = why;
  release_host (run);
  g_free (run->host);
  run->host = other;
  run->host_held = TRUE;
  run->vm_opts.uri = run->host;
}

/* A host of a pool that could not start the domain (its libvirt refused
 * the domain or the guest's volumes): nothing booted, nothing was
 * recorded, no stdin was read, so the same run is made again, once, on
 * another host that can run it.  Returns the new VM, or NULL (then the
 * first failure stands). */
static AirlockVm *
retry_elsewhere (AirlockRun *run, const GError *failure)
{
  g_autoptr (GError) local = NULL;
  g_autofree char *other = NULL;
  AirlockVm *vm;

  if (!run->host || run->host_failed
      || !g_error_matches (failure, AIRLOCK_VM_ERROR, AIRLOCK_VM_ERROR_START))
    return NULL;
  other = acquire_other_host (run, &local);
  if (!other)
    return NULL;
  run->vm_opts.uri = other;
  vm = airlock_vm_new (run->session->arch, run->guest, &run->vm_opts, &local);
  run->vm_opts.uri = run->host;
  if (!vm)
    {
      airlock_hosts_release (other);
      return NULL;
    }
  move_to_host (run, g_steal_pointer (&other),
                g_strdup_printf ("%s: %s", run->host, failure->message));
  return vm;
}

/* Finishes @bundle, a run's, with what the case was and how @record was
 * judged; its error in *@ret_error. */
static void
finish_bundle (AirlockRun *run, AirlockBundle *bundle, AirlockRunRecord *record,
               const AirlockVerdict *verdict, gint64 started_real_us, char **ret_error)
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
    .started_real_us = started_real_us,
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

  if (!airlock_bundle_finish (bundle, &in, &local))
    *ret_error = g_strdup (local->message);
}

/* The end of retry_after_loss()'s hold on the output: the first run's
 * dropped (@retried: the new run's is the run's) or handed out again. */
static void
release_output (AirlockRun *run, gboolean retried)
{
  g_mutex_lock (&run->lock);
  if (retried)
    g_byte_array_set_size (run->out, 0);
  run->out_held = FALSE;
  g_cond_broadcast (&run->cond);
  g_mutex_unlock (&run->lock);
}

/* The host of a pool was lost mid-run (its daemon or its machine went
 * away after the guest booted): the run says nothing of the workload.
 * When nothing of the case's input was used up — its stdin stream gave
 * the lost VM no byte, its caller read no line of output — the same run
 * can be made again, once, on another host.  The first attempt's bundle
 * is finished (inconclusive, with the loss as its reason) and kept as
 * BUNDLE_DIR.attempt-1; the new run writes BUNDLE_DIR.  Returns the new VM,
 * or NULL (then the inconclusive run stands, as without a pool). */
static AirlockVm *
retry_after_loss (AirlockRun *run)
{
  g_autoptr (GError) local = NULL;
  g_autofree char *other = NULL;
  g_autofree char *attempt = NULL;
  g_autofree char *attempt_error = NULL;
  g_autoptr (AirlockRunRecord) record = NULL;
  g_autoptr (AirlockVerdict) verdict = NULL;
  AirlockBundle *fresh = NULL;
  AirlockVm *vm;
  gboolean read;

  if (!run->host || run->host_failed || !airlock_vm_host_lost (run->vm)
      || airlock_vm_took_stdin (run->vm))
    return NULL;
  /* Until it is decided, read_line() hands out nothing: a line of the
   * lost run read now would make the retry a different conversation. */
  g_mutex_lock (&run->lock);
  read = run->out_read > 0;
  run->out_held = !read;
  g_mutex_unlock (&run->lock);
  if (read)
    return NULL;
  other = acquire_other_host (run, &local);
  if (!other)
    {
      release_output (run, FALSE);
      return NULL;
    }

  /* The first attempt's bundle aside, a new one in its place, the new
   * VM: each undone if a later one cannot be had. */
  if (run->bundle)
    {
      attempt = g_strconcat (run->c->bundle_dir, AIRLOCK_BUNDLE_ATTEMPT_SUFFIX, NULL);
      if (!airlock_bundle_move (run->bundle, attempt, &local))
        goto undo_host;
      fresh = airlock_bundle_create (run->c->bundle_dir, &local);
      if (!fresh)
        goto undo_move;
    }
  run->vm_opts.uri = other;
  run->vm_opts.record_data = fresh;
  vm = airlock_vm_new (run->session->arch, run->guest, &run->vm_opts, &local);
  run->vm_opts.uri = run->host;
  run->vm_opts.record_data = run->bundle;
  if (!vm)
    {
      if (fresh)
        {
          airlock_bundle_free (fresh);
          airlock_rm_rf (run->c->bundle_dir);
        }
      goto undo_move;
    }

  record = airlock_vm_get_record (run->vm);
  verdict = airlock_verdict_compute (record, run->c->policy);
  if (run->bundle)
    {
      finish_bundle (run, run->bundle, record, verdict, run->started_real_us, &attempt_error);
      airlock_bundle_free (run->bundle);
    }
  run->bundle = fresh;
  run->vm_opts.record_data = fresh;
  run->lost_attempt = g_steal_pointer (&attempt);
  move_to_host (run, g_steal_pointer (&other),
                g_strdup_printf ("%s: lost mid-run: %s%s%s", run->host,
                                 airlock_vm_get_reason (run->vm),
                                 attempt_error ? "; its bundle could not be finished: " : "",
                                 attempt_error ? attempt_error : ""));
  /* The new run's output is the run's: nobody read the first's. */
  release_output (run, TRUE);
  run->started_real_us = g_get_real_time ();
  return vm;

undo_move:
  if (attempt && !airlock_bundle_move (run->bundle, run->c->bundle_dir, NULL))
    g_prefix_error (&local, "its bundle stays in '%s': ", attempt);
undo_host:
  run->retry_error = g_strdup_printf ("'%s': %s", other, local->message);
  airlock_hosts_release (other);
  release_output (run, FALSE);
  return NULL;
}

static gpointer
run_thread (gpointer data)
{
  AirlockRun *run = data;
  GError *error = NULL;
  gboolean ok = airlock_vm_run (run->vm, &error);
  AirlockVm *again = ok ? retry_after_loss (run) : retry_elsewhere (run, error);

  if (again)
    {
      /* The first VM stays until the run is freed: a caller may still
       * hold it (airlock_run_get_vm()); it is over, nothing more comes. */
      g_clear_error (&error);
      g_mutex_lock (&run->lock);
      run->vm_failed = run->vm;
      run->vm = again;
      g_mutex_unlock (&run->lock);
      ok = airlock_vm_run (run->vm, &error);
    }
  /* The VM is down: its slot is free for the next run. */
  release_host (run);

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
  run->c = airlock_case_copy (c);
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
  if (!airlock_run_prepare (run, error))
    return NULL;

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
      spec.stop_signal = run->image->stop_signal;
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

  /* Kept in the run, whose copy of the spec it points to: a retry on
   * another host of a pool makes its VM from them (run_thread()). */
  run->spec = spec;
  run->vm_opts = vm_opts;
  run->vm_opts.spec = &run->spec;
  if (session->uris)
    {
      run->host = airlock_hosts_acquire ((const char *const *) session->uris,
                                         session->host_slots, session->cache_dir, session->arch,
                                         NULL, error);
      run->host_held = run->host != NULL;
      run->vm_opts.uri = run->host;
    }
  if (!session->uris || run->host)
    run->vm = airlock_vm_new (session->arch, run->guest, &run->vm_opts, error);
  if (!run->vm)
    {
      release_host (run);
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
      gsize avail = run->out_held ? 0 : run->out->len - run->out_read;
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
      if (run->vm_error && run->host_failed)
        g_prefix_error (&run->vm_error, "after '%s' failed it: ", run->host_failed);
      if (run->bundle)
        airlock_bundle_abandon (run->bundle, run->vm_error ? run->vm_error->message
                                                           : "the VM did not start");
      g_propagate_error (error, g_steal_pointer (&run->vm_error));
      return NULL;
    }
  record = airlock_vm_get_record (run->vm);
  verdict = airlock_verdict_compute (record, run->c->policy);
  if (run->bundle)
    finish_bundle (run, run->bundle, record, verdict, run->started_real_us, &run->bundle_error);
  /* The record is the run from here on: the VM (its domain long gone)
   * goes now. */
  g_clear_pointer (&run->vm, airlock_vm_free);
  result = airlock_result_new (run->session->arch, run->c->name, g_steal_pointer (&run->image),
                               verdict, record);
  if (run->bundle)
    airlock_result_set_bundle (result, airlock_bundle_get_dir (run->bundle), run->bundle_error);
  airlock_result_set_host_failure (result, run->host_failed);
  airlock_result_set_lost_attempt (result, run->lost_attempt);
  airlock_result_set_retry_error (result, run->retry_error);
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
  airlock_vm_free (run->vm_failed);
  release_host (run);
  g_free (run->host);
  g_free (run->host_failed);
  g_free (run->lost_attempt);
  g_free (run->retry_error);
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
