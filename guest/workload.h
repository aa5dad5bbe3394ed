/* The parts of PID 1's side of a workload's run, for supervisor.c (one
 * workload, start to end): rootfs.c, network.c, heartbeat.c, stdio.c and
 * reaper.c.  Apart from supervisor.h, which the test programs include as
 * well. */
#ifndef AIRLOCK_WORKLOAD_H
#define AIRLOCK_WORKLOAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "guest.h"
#include "run-spec.h"

/* rootfs.c */
struct handoff;
int mount_root_disk (const struct run_spec *spec, char *error, size_t error_size);
/* In the reaper: builds the workload's root and pivots into it; 0, or 1
 * after reaper_fail() (handoff.h). */
int setup_root (const struct run_spec *spec, struct handoff *h);

/* network.c */
int loopback_up (void);
/* Configures the NIC when the host gave one; 0, or -errno with a sentence
 * in @error. */
int configure_network (char *error, size_t error_size);

/* net-port.c */
/* Makes the tap that stands for the NIC and starts relaying its frames on
 * AIRLOCK_PORT_NET (AIRLOCK_SPEC_NET_PORT); 0, or -errno with a sentence. */
int net_port_start (char *error, size_t error_size);

/* heartbeat.c */
struct heartbeat {
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t wake;   /* on CLOCK_MONOTONIC */
  uint32_t period_ms;
  bool stop;             /* under lock */
  int error;             /* first send error (-errno), atomic */
  /* A warped clock (AIRLOCK_SPEC_WARP): the host's ticks pace the beats. */
  bool host_paced;
  int quit_fd;           /* eventfd: heartbeat_stop() tells the thread to end */
  int main_fd;           /* eventfd the main loop polls: the host said STOP, or
                          * the thread failed (then error is set) */
  int host_stop;         /* atomic: the host sent AIRLOCK_HOST_STOP */
  uint64_t ticks;        /* atomic: the host's ticks read so far (host_paced) */
};

int heartbeat_start (struct heartbeat *hb, uint32_t period_ms, bool host_paced);
void heartbeat_stop (struct heartbeat *hb);

/* stdio.c */
/* Copies the workload's output to the console, a line at a time with a
 * prefix, so it cannot pass for the kernel's or ours.  Returns false at
 * end of file. */
struct relay {
  char line[1024];
  size_t len;
};

bool relay_output (int fd, struct relay *rl);

/* The workload's stdio on AIRLOCK_PORT_STDIO (protocol.h): its own thread,
 * so a host that reads slowly or a workload that does not read its stdin
 * never stalls the notification loop.  Stdin is buffered (bounded) and
 * written without blocking; output chunks are written as they come. */
struct stdio_relay {
  pthread_t thread;
  int port;
  int in_w, out_r, err_r;   /* our ends of the workload's pipes; -1 once closed */
  uint64_t bytes_in, bytes_out;
  int pty;                  /* TTY runs: the terminal's master (no pipes then), else -1 */
};

/* The stdio thread's function, for pipes (stdio_main) or a terminal
 * (tty_main); @data is the struct stdio_relay. */
void *stdio_main (void *data);
void *tty_main (void *data);

#endif /* AIRLOCK_WORKLOAD_H */
