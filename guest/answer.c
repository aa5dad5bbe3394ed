/* A notification's answers and its records' frames (notify.h): what the
 * loop (notify.c), the handlers (calls.c) and the calls the supervisor
 * performs (emulate.c) all say with.  A file of its own, below all three,
 * so that none of them calls back into another's file. */
#define _GNU_SOURCE

#include <errno.h>
#include <linux/audit.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "notify.h"

/* ---- answers -------------------------------------------------------------- */

void
respond (struct notifier *n, uint64_t id, int64_t val, int error, bool cont)
{
  struct seccomp_notif_resp resp = {
    .id = id,
    .val = val,
    .error = error,
    .flags = cont ? SECCOMP_USER_NOTIF_FLAG_CONTINUE : 0,
  };

  /* ENOENT: the caller died (or was killed) meanwhile; nothing to answer. */
  if (ioctl (n->listener, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT)
    console_log ("cannot answer notification %llu: %s", (unsigned long long) id, strerror (errno));
}

/* ---- records -------------------------------------------------------------------- */

/* Sends one frame (a record's, a RESULT); a failure is the channel's,
 * which the host sees as the end of the stream. */
static int
rec_send_frame (struct wire_frame *f, uint64_t *ret_seq)
{
  int r = channel_send (f, ret_seq);

  if (r < 0)
    console_log ("cannot send a record: %s", strerror (-r));
  return r;
}

void
send_result (uint64_t ref, int64_t result)
{
  struct wire_frame f;

  record_result (&f, clock_ns (CLOCK_BOOTTIME), ref, result);
  rec_send_frame (&f, NULL);
}

/* An emulated call that ends before it is made: its RESULT, then the
 * workload's errno. */
void
fail_emulated (struct notifier *n, uint64_t id, uint64_t ref, int err)
{
  send_result (ref, err);
  respond (n, id, 0, err, false);
}

/* The notification is still the one we read about: the caller has not died
 * and its pid been reused while we looked at /proc and its memory. */
bool
still_valid (struct notifier *n, uint64_t id)
{
  return ioctl (n->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* Starts the record of @c's call, answered with @action. */
void
rec_start (struct record *rec, const struct call *c, uint32_t action)
{
  record_begin (rec, &c->req->data, c->req->pid, clock_ns (CLOCK_BOOTTIME), action);
}

/* Sends a record built by a record_*() builder: always one well-formed
 * frame (record.h). */
int
rec_send (struct record *rec, uint64_t *ret_seq)
{
  record_end (rec);
  return rec_send_frame (&rec->f, ret_seq);
}

void
deny (struct call *c, uint32_t reason, int err)
{
  struct record rec;

  rec_start (&rec, c, AIRLOCK_ACTION_DENY);
  record_deny (&rec, reason, &c->pi,
               c->req->data.nr == SYS_socket && c->req->data.arch == filter_native_arch ());
  rec_send (&rec, NULL);
  respond (c->n, c->req->id, 0, -err, false);
}
