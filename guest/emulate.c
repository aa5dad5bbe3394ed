/* The calls the supervisor performs for the workload (EMULATE, notify.c
 * says when): on its own duplicate of the workload's socket, with the
 * bytes it recorded; a call that can block runs in a worker thread, so
 * the loop keeps answering other threads meanwhile. */
#define _GNU_SOURCE

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "notify.h"

#define MAX_WORKERS 64

void
job_free (struct job *j)
{
  if (j->fd >= 0)
    close (j->fd);
  free (j->data);
  free (j->msg.msg_control);
  if (j->copies)
    for (unsigned i = 0; i < j->n_copies; i++)
      msg_copy_clear (&j->copies[i]);
  free (j->copies);
  free (j->vec);
  free (j->iovs);
  free (j);
}

static int64_t
job_perform (struct job *j)
{
  ssize_t r = -1;

  switch (j->op)
    {
    case JOB_CONNECT:
      r = connect (j->fd, (struct sockaddr *) j->addr, j->addr_len);
      break;
    case JOB_SENDTO:
      r = sendto (j->fd, j->data, j->data_len, j->flags | MSG_NOSIGNAL,
                  (struct sockaddr *) j->addr, j->addr_len);
      break;
    case JOB_SENDMSG:
      r = sendmsg (j->fd, &j->msg, j->flags | MSG_NOSIGNAL);
      break;
    case JOB_SENDMMSG:
      r = sendmmsg (j->fd, j->vec, j->n_copies, j->flags | MSG_NOSIGNAL);
      if (r > 0)
        for (int i = 0; i < r; i++)
          {
            /* sendmmsg reports each entry's length in the caller's array. */
            uint32_t len = j->vec[i].msg_len;
            struct iovec local = { .iov_base = &len, .iov_len = sizeof len };
            struct iovec remote = {
              .iov_base = (void *) (uintptr_t) (j->vec_addr + (uint64_t) i * MSG_MMSGHDR_SIZE
                                                + MSG_MMSG_LEN_OFFSET),
              .iov_len = sizeof len,
            };
            process_vm_writev (j->tid, &local, 1, &remote, 1, 0);
          }
      break;
    }
  return r < 0 ? -errno : r;
}

/* Performs the call, reports its result, answers.  MSG_NOSIGNAL: a send on
 * a broken stream must not kill PID 1 with SIGPIPE (the workload's own
 * SIGPIPE is lost, its send still returns EPIPE). */
static void
job_finish (struct job *j)
{
  int64_t r = job_perform (j);

  send_result (j->ref, r);
  if (r < 0)
    respond (j->n, j->id, 0, (int) r, false);
  else
    respond (j->n, j->id, r, 0, false);
}

static void *
worker_main (void *data)
{
  struct job *j = data;
  struct notifier *n = j->n;

  job_finish (j);
  pthread_mutex_lock (&n->lock);
  for (struct job **p = &n->active; *p; p = &(*p)->next)
    if (*p == j)
      {
        *p = j->next;
        break;
      }
  n->workers--;
  pthread_cond_broadcast (&n->idle);
  pthread_mutex_unlock (&n->lock);
  job_free (j);
  return NULL;
}

/* Runs @j now when it cannot block, in a worker when it can.  Takes it.
 * Inline sends carry MSG_DONTWAIT, so a workload that clears O_NONBLOCK
 * after we looked still cannot make this thread wait.  Without a worker to
 * spare (MAX_WORKERS busy) the call runs here and may block this loop;
 * heartbeats go on in their own thread. */
void
job_start (struct notifier *n, struct job *j, bool can_block)
{
  pthread_t t;
  pthread_attr_t attr;

  j->n = n;
  if (can_block)
    {
      pthread_mutex_lock (&n->lock);
      if (n->workers < MAX_WORKERS)
        {
          j->next = n->active;
          n->active = j;
          n->workers++;
          pthread_mutex_unlock (&n->lock);
          pthread_attr_init (&attr);
          pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
          pthread_attr_setstacksize (&attr, 64 * 1024);
          if (pthread_create (&t, &attr, worker_main, j) == 0)
            {
              pthread_attr_destroy (&attr);
              return;
            }
          pthread_attr_destroy (&attr);
          pthread_mutex_lock (&n->lock);
          n->active = j->next;
          n->workers--;
        }
      pthread_mutex_unlock (&n->lock);
      /* No worker to spare: block here (heartbeats go on in their thread). */
    }
  else if (j->op != JOB_CONNECT)
    j->flags |= MSG_DONTWAIT;
  job_finish (j);
  job_free (j);
}

void
notifier_finish (struct notifier *n)
{
  struct timespec ts;

  pthread_mutex_lock (&n->lock);
  /* Whatever the workers wait for (a connect, a full send buffer) ends
   * when their socket is shut down: the workload is gone anyway. */
  for (struct job *j = n->active; j; j = j->next)
    shutdown (j->fd, SHUT_RDWR);
  clock_gettime (CLOCK_REALTIME, &ts);
  ts.tv_sec += 5;
  while (n->workers > 0)
    if (pthread_cond_timedwait (&n->idle, &n->lock, &ts) != 0)
      break;
  if (n->workers > 0)
    console_log ("%u worker(s) still busy at the end of the run", n->workers);
  pthread_mutex_unlock (&n->lock);
}

struct job *
job_new (enum job_op op, const struct seccomp_notif *req, struct sock_info *si)
{
  struct job *j = calloc (1, sizeof *j);

  if (!j)
    return NULL;
  j->op = op;
  j->id = req->id;
  j->tid = (pid_t) req->pid;
  j->fd = si->fd;      /* the job owns our duplicate now */
  si->fd = -1;
  return j;
}

