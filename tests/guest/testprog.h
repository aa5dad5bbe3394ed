/* Shared helpers of the multi-call test program (static, no GLib).
 *
 * Every behaviour prints one line per system call it makes, prefixed
 * "testprog: COMMAND: ", with the result or the errno, and returns the exit
 * status: 0 when the behaviour ran as intended (a denied call failing IS
 * intended), 1 when it did not (a call that must be denied succeeded, or
 * the setup a behaviour needs failed), 77 when it cannot run on this
 * machine (the reason is printed). */
#ifndef TESTPROG_H
#define TESTPROG_H

#include "behaviours.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>

#define TESTPROG_OK 0
#define TESTPROG_FAILED 1
#define TESTPROG_SKIP 77

#define DECLARE_BEHAVIOUR(command, function, arches) int behaviour_##function (int argc, char **argv);
TESTPROG_BEHAVIOURS (DECLARE_BEHAVIOUR)
TESTPROG_NET_BEHAVIOURS (DECLARE_BEHAVIOUR)
#undef DECLARE_BEHAVIOUR

/* The command being run ("connect-tcp4"). */
extern const char *testprog_command;

/* Prints "testprog: COMMAND: " and the message, a newline, and flushes (so
 * lines are never duplicated by a fork or lost by a crash). */
void say (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* Prints "WHAT: ok (R)" or "WHAT: errno N (NAME)" for the result @r of a
 * call that sets errno on failure, and returns @r with errno unchanged. */
long report (const char *what, long r);

/* The same for a raw system call result (-errno on failure); returns it. */
long report_raw (const char *what, long r);

/* Fill a socket address from text; abort on a bad literal (a bug here). */
socklen_t make_sin (struct sockaddr_in *sa, const char *addr, unsigned port);
socklen_t make_sin6 (struct sockaddr_in6 *sa, const char *addr, unsigned port, unsigned scope_id);

/* Brings the loopback interface up through the inet socket @fd (an ioctl,
 * not a traced call, so using a socket the behaviour needs anyway adds no
 * record).  The guest's lo starts down; addresses on it exist only once it
 * is up.  Returns 0 or -errno. */
int loopback_up (int fd);

/* A DNS query for @name, type A, class IN, id @id: writes it to @buf
 * (at least 512 bytes) and returns its length. */
size_t dns_query (unsigned char *buf, const char *name, unsigned id);

/* A UDP socket connected to 127.0.0.1:@port, with loopback brought up
 * through it, reporting each step ("socket", "loopback up", "connect");
 * returns the socket or -1. */
int udp_connect_loopback (unsigned port);

/* socket() + connect() to @sa, reporting both; returns the socket or -1. */
int connect_to (int family, int type, int protocol, const struct sockaddr *sa, socklen_t len);

#endif /* TESTPROG_H */
