/* Internals of one notification, shared by notify.c (the loop: receive,
 * dispatch), answer.c (the answers, the records' frames), caller.c (who
 * calls, its memory, its socket), calls.c (a handler per system call) and
 * emulate.c (the calls the supervisor performs for the workload). */
#ifndef AIRLOCK_NOTIFY_H
#define AIRLOCK_NOTIFY_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "msg.h"
#include "proc-info.h"
#include "record.h"
#include "supervisor.h"

#define CLONE3_SEEN_MAX 256

struct job;

struct notifier {
  int listener;
  uint64_t count;
  pthread_mutex_t lock;
  pthread_cond_t idle;
  struct job *active;      /* jobs running in workers */
  unsigned workers;
  pid_t clone3_seen[CLONE3_SEEN_MAX];
  size_t n_clone3_seen;
};

enum job_op { JOB_CONNECT, JOB_SENDTO, JOB_SENDMSG, JOB_SENDMMSG };

struct job {
  struct notifier *n;
  struct job *next;
  enum job_op op;
  uint64_t id;             /* the notification to answer */
  uint64_t ref;            /* seq of the (first) record */
  pid_t tid;               /* the caller, for sendmmsg's msg_len write-back */
  int fd;                  /* our duplicate of its socket */
  int flags;
  uint8_t addr[MSG_SOCKADDR_MAX];
  socklen_t addr_len;
  uint8_t *data;
  size_t data_len;
  struct msghdr msg;       /* JOB_SENDMSG */
  struct iovec iov;
  struct msg_copy *copies; /* JOB_SENDMMSG: n_copies entries */
  struct mmsghdr *vec;
  struct iovec *iovs;
  unsigned n_copies;
  uint64_t vec_addr;
};

struct call {
  struct notifier *n;
  const struct seccomp_notif *req;
  struct proc_info pi;
};

/* answer.c */
void respond (struct notifier *n, uint64_t id, int64_t val, int error, bool cont);
void send_result (uint64_t ref, int64_t result);
void fail_emulated (struct notifier *n, uint64_t id, uint64_t ref, int err);
bool still_valid (struct notifier *n, uint64_t id);
void rec_start (struct record *rec, const struct call *c, uint32_t action);
int rec_send (struct record *rec, uint64_t *ret_seq);
void deny (struct call *c, uint32_t reason, int err);

/* caller.c */
struct msg_mem mem_of (pid_t tid);
ssize_t mem_read_string (pid_t tid, uint64_t addr, char *buf, size_t size);
size_t mem_read_argv (pid_t tid, uint64_t argv_addr, char *buf, size_t size);
/* Our duplicate of @target_fd of process @tgid (pidfd_getfd) and what it
 * is; sock_info_clear() closes it. */
void sock_info_get (uint32_t tgid, int target_fd, struct sock_info *si);
void sock_info_clear (struct sock_info *si);
bool is_inet (const struct sock_info *si);

/* emulate.c */
struct job *job_new (enum job_op op, const struct seccomp_notif *req, struct sock_info *si);
void job_start (struct notifier *n, struct job *j, bool can_block);
void job_free (struct job *j);

/* calls.c */
void handle_socket (struct call *c);
void handle_socketpair (struct call *c);
void handle_connect_bind (struct call *c, bool is_connect);
void handle_fd_call (struct call *c);
void handle_sendto (struct call *c);
void handle_sendmsg (struct call *c);
void handle_sendmmsg (struct call *c);
enum write_call { WRITE_WRITE, WRITE_WRITEV, WRITE_SENDFILE, WRITE_SPLICE };
void handle_write (struct call *c, enum write_call kind);
void handle_exec (struct call *c, bool at);
void handle_clone3 (struct call *c);

#endif /* AIRLOCK_NOTIFY_H */
