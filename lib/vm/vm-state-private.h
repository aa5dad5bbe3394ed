/* One VM's state, shared by the files that make up a run: vm.c (the
 * lifecycle: create, run, free), domain.c (the run directory, the network
 * and the domain), streams.c (the endpoints and the threads that read and
 * write them), teardown.c (the end of the domain, the streams and a lost
 * connection) and getters.c (what the VM tells its caller).  A header of
 * its own, not vm-private.h, so those files need not include vm.c's
 * header and vm.c can include theirs: the includes run one way. */
#pragma once

#include "evidence/event.h"
#include "record/run-record.h"
#include "vm/connection-private.h"
#include "vm/sinkhole-proc.h"
#include "vm/vm.h"

G_BEGIN_DECLS

/* Where the console or the evidence channel is read: a unix socket we
 * connected to ourselves (embedded driver: QEMU is local and binds its
 * sockets in our directory), or a libvirt stream (a daemon, local or remote).
 * Own sockets avoid libvirt's chardev streams, which can deadlock against
 * the domain's teardown when the guest stops on its own. */
typedef struct {
  int fd;
  virStreamPtr stream;
} AirlockEndpoint;

struct _AirlockVm {
  AirlockArch arch;
  const AirlockGuestImage *image;
  AirlockVmOptions opts;
  char *uri_opt;
  char *cache_dir;
  char *test_mode;
  char **serve;

  AirlockConnection *conn;   /* owned unless conn_borrowed */
  gboolean conn_borrowed;
  char *virt_type;
  char *accel_notice;
  GPtrArray *swept;

  char *run_id;
  char *name;
  char *run_dir;
  char *socket_dir;
  char *pcap_dir;            /* holds net.pcap (NIC frames), or NULL: no NIC */
  char *pcap_path;
  GBytes *pcap;              /* read at teardown, before the files go */
  char *pcap_error;          /* why there is no pcap although there was a NIC */
  AirlockSinkholeProc *sinkhole;  /* the network's process, until teardown */
  GBytes *sinkhole_records;  /* its records, read at teardown */
  char *sinkhole_error;      /* why there are none although there was a NIC */
  /* A remote hypervisor: the guest's network is its channel AIRLOCK_PORT_NET,
   * passed to and from the sinkhole's socket (streams.c) by two threads,
   * up when the stream's event callback says it has data. */
  gboolean net_port;
  AirlockEndpoint net_ep;    /* a non-blocking stream */
  gboolean net_watched;      /* its event callback is registered */
  gboolean net_readable;     /* under lock: the callback saw data */
  gboolean net_quit;         /* under lock: the up thread ends */
  int net_fd;                /* our connection to the sinkhole's socket */
  GThread *net_up_thread;
  GThread *net_down_thread;

  GMutex lock;
  GCond cond;
  AirlockChannel *channel;
  GBytes *spec;              /* encoded run spec, or NULL for the boot check */
  AirlockEventLog *events;   /* with a spec */
  guint32 spec_timeout_ms;   /* the spec's time limit, for the run record */
  AirlockRunRecord *record;  /* made once the run is over (airlock_vm_get_record) */
  GByteArray *console;
  gboolean console_truncated;
  gboolean evidence_eof;
  gboolean console_eof;
  gboolean domain_stopped;
  int stop_detail_event;     /* virDomainEventType / detail of the stop, -1 if unknown */
  int stop_detail;
  char *reason;
  AirlockVmTimings t;

  virDomainPtr dom;
  AirlockEndpoint evidence_ep;
  AirlockEndpoint console_ep;
  AirlockEndpoint stdio_ep;
  GThread *evidence_thread;
  GThread *console_thread;
  GThread *stdio_thread;
  char *root_disk_path;
  char *root_disk_serial;
  gboolean stdio;
  GBytes *stdin_data;
  GInputStream *stdin_stream;
  GCancellable *stdin_cancel;
  gint stdin_taken;          /* bytes read from stdin_stream (atomic): a retry needs 0 */
  GThread *stdin_thread;
  GByteArray *out[2];        /* the workload's stdout, stderr */
  gboolean out_truncated;
  gboolean stdio_eof;
  int lifecycle_cb;
  gboolean destroyed_by_us;
  pid_t qemu_pid;            /* embedded, when QEMU is our child (we reap it), else 0 */
  /* Serialises chunks on the stdio port: stdin from its sender thread,
   * window sizes from any thread (airlock_vm_send_winsize()). */
  GMutex stdio_send_lock;
  gboolean stdio_send_ok;    /* under stdio_send_lock: the port is connected */
  gboolean tty;              /* the spec asks for a terminal */
  char *cancel_reason;       /* under lock: airlock_vm_cancel() was called, why */
  /* clock_warp: the thread that sends the guest its ticks and our stop
   * (protocol.h, AIRLOCK_HOST_TICK), until ticker_quit (under lock). */
  GThread *ticker_thread;
  gboolean ticker_quit;
  /* Through a daemon: the connection died under the run (the daemon
   * stopped, crashed or restarted), and what became of the domain. */
  gboolean conn_lost;
  char *conn_lost_outcome;
};

G_END_DECLS
