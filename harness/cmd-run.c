/* airlock run: boot a guest, run one of the test programs under the
 * supervisor, and print what it tried: every traced call with its socket,
 * destination, DNS names and outcome, the processes it started, how it
 * ended. */
#include "config.h"

#include "harness.h"

#include "evidence/event.h"
#include "gate/verdict.h"
#include "net/flows.h"
#include "evidence/frame-private.h"

#include <gio/gunixinputstream.h>
#include <json-glib/json-glib.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <string.h>

#define DEFAULT_TIMEOUT_S 30
#define MAX_TIMEOUT_S 86400

/* Where the test programs live in the guest, and what they run with: a
 * fixed, minimal environment, so nothing of the host or the guest's own
 * init leaks into what is measured. */
#define TESTROOT "/airlock/testroot"
static const char *const run_envp[] = {
  "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
  "HOME=/root",
  NULL,
};

/* ---- the attempts table ---- */

typedef struct {
  GPtrArray *rows;   /* GStrv, each with n_cols cells */
  guint n_cols;
} Table;

static void
table_init (Table *t, const char *const *header)
{
  t->rows = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  t->n_cols = g_strv_length ((GStrv) header);
  g_ptr_array_add (t->rows, g_strdupv ((GStrv) header));
}

/* Takes ownership of @cells (n_cols strings). */
static void
table_add (Table *t, char **cells)
{
  GStrv row = g_new0 (char *, t->n_cols + 1);

  for (guint i = 0; i < t->n_cols; i++)
    row[i] = cells[i] ? cells[i] : g_strdup ("-");
  g_ptr_array_add (t->rows, row);
}

static void
table_print (Table *t, const char *indent)
{
  g_autofree guint *widths = g_new0 (guint, t->n_cols);

  for (guint r = 0; r < t->rows->len; r++)
    {
      GStrv row = t->rows->pdata[r];

      for (guint c = 0; c < t->n_cols; c++)
        widths[c] = MAX (widths[c], (guint) g_utf8_strlen (row[c], -1));
    }
  for (guint r = 0; r < t->rows->len; r++)
    {
      GStrv row = t->rows->pdata[r];
      GString *line = g_string_new (indent);

      for (guint c = 0; c < t->n_cols; c++)
        {
          g_string_append (line, row[c]);
          if (c + 1 < t->n_cols)
            for (guint pad = (guint) g_utf8_strlen (row[c], -1); pad < widths[c] + 2; pad++)
              g_string_append_c (line, ' ');
        }
      printf ("%s\n", line->str);
      g_string_free (line, TRUE);
    }
  g_ptr_array_unref (t->rows);
}

static gboolean
is_exec (const AirlockEvent *ev)
{
  return ev->syscall_name != NULL
         && (g_str_equal (ev->syscall_name, "execve") || g_str_equal (ev->syscall_name, "execveat"));
}

static char *
process_cell (const AirlockEvent *ev)
{
  const char *exe = ev->exe ? ev->exe : NULL;
  const char *base = exe ? strrchr (exe, '/') : NULL;
  guint32 pid = ev->has_nspid ? ev->nspid : ev->pid;

  base = base ? base + 1 : exe;
  return g_strdup_printf ("%s[%u]", base && *base ? base : "?", pid);
}

static char *
syscall_cell (const AirlockEvent *ev)
{
  return ev->foreign_abi ? g_strdup_printf ("%s:%s", ev->abi, ev->syscall_name)
                         : g_strdup (ev->syscall_name);
}

static char *
dns_cell (const AirlockEvent *ev)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; i < ev->dns->len; i++)
    {
      const AirlockDnsQuery *q = ev->dns->pdata[i];

      for (guint j = 0; j < q->questions->len; j++)
        {
          const AirlockDnsQuestion *question = q->questions->pdata[j];

          if (out->len)
            g_string_append_c (out, ',');
          g_string_append (out, question->name);
        }
    }
  if (out->len == 0)
    {
      g_string_free (out, TRUE);
      return NULL;
    }
  return g_string_free (out, FALSE);
}

static void
attempt_row (Table *t, const AirlockEvent *ev)
{
  const AirlockSockaddr *dest = airlock_event_get_destination (ev);
  char *cells[8] = { NULL };

  cells[0] = process_cell (ev);
  cells[1] = syscall_cell (ev);
  if (ev->has_socket)
    {
      g_autofree char *triple = airlock_socket_triple_to_string ((int) ev->sock_family,
                                                                 (int) ev->sock_type,
                                                                 (int) ev->sock_protocol);
      const char *slash = strchr (triple, '/');

      cells[2] = airlock_socket_family_to_string ((int) ev->sock_family);
      cells[3] = g_strdup (slash ? slash + 1 : triple);
    }
  if (dest)
    {
      cells[4] = airlock_sockaddr_to_string (dest);
      if (dest->effect == AIRLOCK_SOCKADDR_ADDRESS
          && (dest->family == AF_INET || dest->family == AF_INET6))
        cells[5] = g_strdup_printf ("%u", dest->inet.port);
    }
  else if ((ev->addr && !ev->addr_decoded) || (ev->peer && !ev->peer_decoded))
    cells[4] = g_strdup ("? (does not decode)");
  cells[6] = dns_cell (ev);
  cells[7] = airlock_event_outcome (ev);
  table_add (t, cells);
}

static char *
argv_text (const char *const *argv)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; argv && argv[i]; i++)
    {
      const char *arg = argv[i];

      if (i)
        g_string_append_c (out, ' ');
      /* Escaped already; quote what would not read as one word. */
      if (*arg == '\0' || strpbrk (arg, " '\"") != NULL)
        g_string_append_printf (out, "'%s'", arg);
      else
        g_string_append (out, arg);
    }
  return g_string_free (out, FALSE);
}

/* ---- JSON lines ---- */

static void
add_strv (JsonBuilder *b, const char *name, GStrv strv)
{
  if (!strv)
    return;
  json_builder_set_member_name (b, name);
  json_builder_begin_array (b);
  for (guint i = 0; strv[i]; i++)
    json_builder_add_string_value (b, strv[i]);
  json_builder_end_array (b);
}

static void
add_sockaddr (JsonBuilder *b, const char *name, GBytes *raw, gboolean decoded,
              const AirlockSockaddr *sa, const char *error)
{
  if (!raw)
    return;
  json_builder_set_member_name (b, name);
  json_builder_begin_object (b);
  {
    gsize len;
    const guint8 *bytes = g_bytes_get_data (raw, &len);
    GString *hex = g_string_new (NULL);

    for (gsize i = 0; i < len; i++)
      g_string_append_printf (hex, "%02x", bytes[i]);
    json_builder_set_member_name (b, "hex");
    json_builder_add_string_value (b, hex->str);
    g_string_free (hex, TRUE);
  }
  if (decoded)
    {
      g_autofree char *text = airlock_sockaddr_to_string (sa);

      json_builder_set_member_name (b, "text");
      json_builder_add_string_value (b, text);
      if (sa->effect == AIRLOCK_SOCKADDR_ADDRESS && (sa->family == AF_INET || sa->family == AF_INET6))
        {
          json_builder_set_member_name (b, "port");
          json_builder_add_int_value (b, sa->inet.port);
        }
    }
  else if (error)
    {
      json_builder_set_member_name (b, "error");
      json_builder_add_string_value (b, error);
    }
  json_builder_end_object (b);
}

#define SET_INT(b, name, value) \
  (json_builder_set_member_name ((b), (name)), json_builder_add_int_value ((b), (gint64) (value)))
#define SET_STR(b, name, value) \
  (json_builder_set_member_name ((b), (name)), json_builder_add_string_value ((b), (value)))

static char *
event_to_json (AirlockArch arch, const AirlockEvent *ev)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = NULL;
  g_autofree char *key_line = airlock_event_key_line (ev);
  g_autofree char *outcome = airlock_event_outcome (ev);

  json_builder_begin_object (b);
  SET_STR (b, "arch", airlock_arch_to_string (arch));
  SET_INT (b, "seq", ev->seq);
  SET_STR (b, "kind", airlock_event_kind_to_string (ev->kind));
  if (ev->phase)
    SET_STR (b, "phase", ev->phase == AIRLOCK_PHASE_CONTROLS ? "controls" : "workload");
  SET_INT (b, "time_ns", ev->time_ns);
  if (ev->kind == AIRLOCK_EVENT_SYSCALL)
    {
      SET_STR (b, "action", airlock_event_action_to_string (ev->action));
      if (ev->action == AIRLOCK_ACTION_DENY)
        SET_STR (b, "reason", airlock_deny_reason_to_string (ev->reason));
      SET_STR (b, "key", key_line);
      SET_STR (b, "outcome", outcome);
    }
  if (ev->has_syscall)
    {
      SET_STR (b, "syscall", ev->syscall_name);
      SET_STR (b, "abi", ev->abi);
      SET_INT (b, "syscall_nr", ev->syscall_nr);
      SET_INT (b, "audit_arch", ev->audit_arch);
    }
  if (ev->has_args)
    {
      json_builder_set_member_name (b, "args");
      json_builder_begin_array (b);
      for (guint i = 0; i < 6; i++)
        {
          g_autofree char *hex = g_strdup_printf ("0x%" G_GINT64_MODIFIER "x", ev->args[i]);

          json_builder_add_string_value (b, hex);
        }
      json_builder_end_array (b);
    }
  if (ev->has_pid)
    SET_INT (b, "pid", ev->pid);
  if (ev->has_tid)
    SET_INT (b, "tid", ev->tid);
  if (ev->has_ppid)
    SET_INT (b, "ppid", ev->ppid);
  if (ev->has_nspid)
    SET_INT (b, "nspid", ev->nspid);
  if (ev->has_uid)
    SET_INT (b, "uid", ev->uid);
  if (ev->has_gid)
    SET_INT (b, "gid", ev->gid);
  if (ev->exe)
    SET_STR (b, "exe", ev->exe);
  add_strv (b, "argv", ev->argv);
  add_strv (b, "exec-argv", ev->exec_argv);
  if (ev->has_fd)
    SET_INT (b, "fd", ev->fd);
  if (ev->has_socket)
    {
      g_autofree char *triple = airlock_socket_triple_to_string ((int) ev->sock_family,
                                                                 (int) ev->sock_type,
                                                                 (int) ev->sock_protocol);
      SET_STR (b, "socket", triple);
    }
  if (ev->has_sock_id)
    SET_INT (b, "sock_id", ev->sock_id);
  add_sockaddr (b, "addr", ev->addr, ev->addr_decoded, &ev->addr_sa, ev->addr_error);
  if (ev->has_addrlen)
    SET_INT (b, "addrlen", ev->addrlen);
  add_sockaddr (b, "peer", ev->peer, ev->peer_decoded, &ev->peer_sa, ev->peer_error);
  add_sockaddr (b, "local", ev->local, ev->local_decoded, &ev->local_sa, NULL);
  if (ev->has_msg_flags)
    SET_INT (b, "msg_flags", ev->msg_flags);
  if (ev->has_msg_index)
    {
      SET_INT (b, "msg_index", ev->msg_index);
      SET_INT (b, "msg_count", ev->msg_count);
    }
  if (ev->has_payload_len)
    SET_INT (b, "payload_len", ev->payload_len);
  if (ev->dns->len > 0)
    {
      json_builder_set_member_name (b, "dns");
      json_builder_begin_array (b);
      for (guint i = 0; i < ev->dns->len; i++)
        {
          const AirlockDnsQuery *q = ev->dns->pdata[i];

          for (guint j = 0; j < q->questions->len; j++)
            {
              const AirlockDnsQuestion *question = q->questions->pdata[j];

              json_builder_begin_object (b);
              SET_STR (b, "name", question->name);
              SET_INT (b, "qtype", question->qtype);
              SET_INT (b, "qclass", question->qclass);
              json_builder_end_object (b);
            }
          if (q->problem != AIRLOCK_DNS_WELL_FORMED)
            {
              json_builder_begin_object (b);
              SET_STR (b, "problem", airlock_dns_problem_to_string (q->problem));
              SET_STR (b, "reason", q->reason);
              json_builder_end_object (b);
            }
        }
      json_builder_end_array (b);
    }
  if (ev->path)
    SET_STR (b, "path", ev->path);
  if (ev->note)
    SET_STR (b, "note", ev->note);
  if (ev->has_ref)
    SET_INT (b, "ref", ev->ref);
  if (ev->has_result)
    {
      g_autofree char *text = airlock_result_to_string (ev->result);

      SET_INT (b, "result", ev->result);
      SET_STR (b, "result_text", text);
      SET_INT (b, "result_seq", ev->result_seq);
    }
  if (ev->has_exit_status)
    {
      g_autofree char *text = airlock_wait_status_to_string (ev->exit_status);

      SET_INT (b, "exit_status", ev->exit_status);
      SET_STR (b, "exit", text);
    }
  json_builder_end_object (b);

  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  return json_generator_to_data (gen, NULL);
}

/* ---- one run ---- */

static const char *
end_reason_to_string (guint32 reason)
{
  switch (reason)
    {
    case AIRLOCK_END_COMPLETED:
      return "completed";
    case AIRLOCK_END_TIMEOUT:
      return "timeout";
    case AIRLOCK_END_ERROR:
      return "error";
    default:
      return "unknown";
    }
}

static void
print_report (AirlockArch arch, AirlockVm *vm, gboolean json)
{
  AirlockEventLog *log = airlock_vm_get_events (vm);
  GPtrArray *events = log ? airlock_event_log_get_events (log) : NULL;
  const AirlockTrailer *trailer = airlock_channel_get_trailer (airlock_vm_get_channel (vm));
  const AirlockEvent *exit_ev = NULL;
  static const char *const attempt_header[] = {
    "process", "syscall", "family", "type/protocol", "destination", "port", "DNS name",
    "outcome", NULL,
  };
  /* pid: in the workload's namespace (what `ps` there shows); guest pid
   * and ppid: in the guest's, where a parent outside the namespace lives. */
  static const char *const process_header[] = {
    "pid", "guest pid", "guest ppid", "executes", "argv", "caller", NULL,
  };
  Table attempts, processes;
  guint n_attempts = 0, n_processes = 0;

  if (json)
    {
      for (guint i = 0; events && i < events->len; i++)
        {
          g_autofree char *line = event_to_json (arch, events->pdata[i]);

          printf ("%s\n", line);
        }
      return;
    }

  /* The negative controls' records first, in a table of their own: they
   * are ours, not the workload's. */
  {
    Table controls;
    guint n_controls = 0;

    table_init (&controls, attempt_header);
    for (guint i = 0; events && i < events->len; i++)
      {
        const AirlockEvent *ev = events->pdata[i];

        if (ev->phase == AIRLOCK_PHASE_CONTROLS && ev->kind == AIRLOCK_EVENT_SYSCALL && !is_exec (ev))
          {
            attempt_row (&controls, ev);
            n_controls++;
          }
      }
    if (n_controls > 0)
      {
        printf ("%s: negative controls, as the supervisor saw them (%u)\n",
                airlock_arch_to_string (arch), n_controls);
        table_print (&controls, "  ");
      }
    else
      g_ptr_array_unref (controls.rows);
  }

  table_init (&attempts, attempt_header);
  table_init (&processes, process_header);
  for (guint i = 0; events && i < events->len; i++)
    {
      const AirlockEvent *ev = events->pdata[i];

      if (ev->phase == AIRLOCK_PHASE_CONTROLS)
        continue;
      if (ev->kind == AIRLOCK_EVENT_WORKLOAD_EXIT)
        exit_ev = ev;
      if (ev->kind != AIRLOCK_EVENT_SYSCALL)
        continue;
      if (is_exec (ev))
        {
          char *cells[6];

          cells[0] = ev->has_nspid ? g_strdup_printf ("%u", ev->nspid) : NULL;
          cells[1] = ev->has_pid ? g_strdup_printf ("%u", ev->pid) : NULL;
          cells[2] = ev->has_ppid ? g_strdup_printf ("%u", ev->ppid) : NULL;
          cells[3] = g_strdup (ev->path);
          cells[4] = ev->exec_argv ? argv_text ((const char *const *) ev->exec_argv) : NULL;
          cells[5] = g_strdup (ev->exe);
          table_add (&processes, cells);
          n_processes++;
          continue;
        }
      attempt_row (&attempts, ev);
      n_attempts++;
    }

  printf ("%s: attempts (%u)\n", airlock_arch_to_string (arch), n_attempts);
  if (n_attempts > 0)
    table_print (&attempts, "  ");
  else
    g_ptr_array_unref (attempts.rows);
  printf ("%s: processes (%u)\n", airlock_arch_to_string (arch), n_processes);
  if (n_processes > 0)
    table_print (&processes, "  ");
  else
    g_ptr_array_unref (processes.rows);

  if (exit_ev)
    {
      g_autofree char *status = airlock_wait_status_to_string (exit_ev->exit_status);

      printf ("%s: workload %s\n", airlock_arch_to_string (arch), status);
    }
  else
    printf ("%s: workload exit not reported\n", airlock_arch_to_string (arch));
  if (trailer)
    printf ("%s: end: %s\n", airlock_arch_to_string (arch),
            end_reason_to_string (trailer->end_reason));
  else
    printf ("%s: end: no trailer\n", airlock_arch_to_string (arch));
}

/* With --stdin -: the workload's output as it comes, on our stdout and
 * stderr, unchanged (a conversation with a stdio server reads naturally). */
static void
live_output (int stream, const guint8 *data, gsize len, gpointer user_data)
{
  FILE *f = stream == AIRLOCK_STDIO_STDERR ? stderr : stdout;

  fwrite (data, 1, len, f);
  fflush (f);
}

/* The workload's own output, after the tables, each stream under its name
 * (only when it wrote something). */
static void
print_output (AirlockArch arch, AirlockVm *vm)
{
  g_autoptr (GBytes) out = airlock_vm_get_stdout (vm);
  g_autoptr (GBytes) err = airlock_vm_get_stderr (vm);
  GBytes *streams[2] = { out, err };
  static const char *const names[2] = { "stdout", "stderr" };

  for (int i = 0; i < 2; i++)
    {
      gsize len, start = 0;
      const char *data = g_bytes_get_data (streams[i], &len);

      if (len == 0)
        continue;
      printf ("%s: %s (%" G_GSIZE_FORMAT " bytes%s):\n", airlock_arch_to_string (arch), names[i],
              len, airlock_vm_get_output_truncated (vm) ? ", truncated" : "");
      /* Line by line, each escaped: the workload's bytes cannot move the
       * terminal's cursor or pass for our lines. */
      while (start < len)
        {
          const char *nl = memchr (data + start, '\n', len - start);
          gsize end = nl ? (gsize) (nl - data) : len;
          g_autofree char *line = airlock_evidence_escape_bytes ((const guint8 *) data + start,
                                                                 end - start);

          printf ("  | %s\n", line);
          start = end + 1;
        }
    }
}

/* Writes @len bytes to @dir/@name, which must not exist yet. */
static gboolean
write_new_file (const char *dir, const char *name, const void *data, gsize len, GError **error)
{
  g_autofree char *path = g_build_filename (dir, name, NULL);
  const guint8 *p = data;
  int fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);

  if (fd < 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno), "cannot create '%s': %s",
                   path, g_strerror (errno));
      return FALSE;
    }
  while (len > 0)
    {
      ssize_t n = write (fd, p, len);

      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        {
          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno), "cannot write '%s': %s",
                       path, g_strerror (errno));
          close (fd);
          return FALSE;
        }
      p += n;
      len -= (gsize) n;
    }
  if (fsync (fd) < 0 || close (fd) < 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno), "cannot write '%s': %s",
                   path, g_strerror (errno));
      return FALSE;
    }
  return TRUE;
}

static gboolean
write_new_bytes (const char *dir, const char *name, GBytes *bytes, GError **error)
{
  gsize len;
  const void *data = g_bytes_get_data (bytes, &len);

  return write_new_file (dir, name, data, len, error);
}

/* --out DIR: the run's raw material in DIR/ARCH/, every file created
 * anew (an existing directory is refused, nothing is overwritten): what the
 * host sent (hello + spec), the evidence stream exactly as received, the
 * decoded events, the console, the workload's output, and run.json with
 * the image digests, how the run ended and the hash-chain head.  The full
 * evidence bundle (manifest, verdict, statement) builds on this. */
static gboolean
write_run_dir (const char *out_dir, AirlockArch arch, AirlockVm *vm, const AirlockImage *oci,
               GError **error)
{
  const char *arch_name = airlock_arch_to_string (arch);
  g_autofree char *dir = g_build_filename (out_dir, arch_name, NULL);
  AirlockChannel *channel = airlock_vm_get_channel (vm);
  AirlockEventLog *log = airlock_vm_get_events (vm);
  GPtrArray *events = log ? airlock_event_log_get_events (log) : NULL;
  const AirlockTrailer *trailer = airlock_channel_get_trailer (channel);
  GBytes *raw = airlock_channel_get_raw (channel);   /* owned by the channel */
  g_autoptr (GBytes) console = airlock_vm_get_console (vm);
  g_autoptr (GBytes) out = airlock_vm_get_stdout (vm);
  g_autoptr (GBytes) err = airlock_vm_get_stderr (vm);
  g_autoptr (GBytes) pcap = airlock_vm_get_pcap (vm);
  g_autoptr (GByteArray) host = g_byte_array_new ();
  g_autoptr (GString) jsonl = g_string_new (NULL);
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = NULL;
  g_autofree char *run_json = NULL;
  g_autofree char *chain = NULL;
  GBytes *spec = airlock_channel_get_spec (channel);
  gsize hello_len;
  const guint8 *hello = airlock_channel_get_host_hello (channel, &hello_len);

  if (g_mkdir_with_parents (out_dir, 0755) < 0 || mkdir (dir, 0755) < 0)
    {
      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (errno),
                   "cannot create the run directory '%s': %s%s", dir, g_strerror (errno),
                   errno == EEXIST ? " (a run directory is never overwritten)" : "");
      return FALSE;
    }
  g_byte_array_append (host, hello, (guint) hello_len);
  if (spec)
    g_byte_array_append (host, g_bytes_get_data (spec, NULL), (guint) g_bytes_get_size (spec));
  for (guint i = 0; events && i < events->len; i++)
    {
      g_autofree char *line = event_to_json (arch, events->pdata[i]);

      g_string_append_printf (jsonl, "%s\n", line);
    }
  {
    const guint8 *head = airlock_channel_get_chain_head (channel);
    GString *hex = g_string_new (NULL);

    for (int i = 0; i < 32; i++)
      g_string_append_printf (hex, "%02x", head[i]);
    chain = g_string_free (hex, FALSE);
  }

  json_builder_begin_object (b);
  json_builder_set_member_name (b, "airlock");
  json_builder_add_string_value (b, AIRLOCK_VERSION);
  json_builder_set_member_name (b, "arch");
  json_builder_add_string_value (b, arch_name);
  if (oci)
    {
      json_builder_set_member_name (b, "image");
      json_builder_begin_object (b);
      json_builder_set_member_name (b, "reference");
      json_builder_add_string_value (b, oci->reference);
      json_builder_set_member_name (b, "index");
      json_builder_add_string_value (b, oci->index_digest);
      json_builder_set_member_name (b, "manifest");
      json_builder_add_string_value (b, oci->manifest_digest);
      json_builder_set_member_name (b, "config");
      json_builder_add_string_value (b, oci->config_digest);
      json_builder_end_object (b);
    }
  json_builder_set_member_name (b, "accel");
  json_builder_add_string_value (b, airlock_vm_get_accel (vm));
  json_builder_set_member_name (b, "complete");
  json_builder_add_boolean_value (b, airlock_vm_is_complete (vm));
  json_builder_set_member_name (b, "reason");
  json_builder_add_string_value (b, airlock_vm_get_reason (vm));
  json_builder_set_member_name (b, "chain-head");
  json_builder_add_string_value (b, chain);
  if (trailer)
    {
      json_builder_set_member_name (b, "exit-status");
      json_builder_add_int_value (b, trailer->exit_status);
      json_builder_set_member_name (b, "end");
      json_builder_add_string_value (b, end_reason_to_string (trailer->end_reason));
    }
  json_builder_set_member_name (b, "output-truncated");
  json_builder_add_boolean_value (b, airlock_vm_get_output_truncated (vm));
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  json_generator_set_pretty (gen, TRUE);
  run_json = json_generator_to_data (gen, NULL);

  return write_new_file (dir, "host.bin", host->data, host->len, error)
         && write_new_bytes (dir, "evidence.bin", raw, error)
         && write_new_file (dir, "events.jsonl", jsonl->str, jsonl->len, error)
         && write_new_bytes (dir, "console.log", console, error)
         && write_new_bytes (dir, "stdout", out, error)
         && write_new_bytes (dir, "stderr", err, error)
         && (!pcap || write_new_bytes (dir, "net.pcap", pcap, error))
         && write_new_file (dir, "run.json", run_json, strlen (run_json), error);
}

/* `airlock gate`: what each arch's run decided. */
typedef struct {
  AirlockPolicy *policy;
  AirlockVerdict *verdicts[AIRLOCK_N_ARCHES];
  char *digests[AIRLOCK_N_ARCHES];   /* manifest digest the verdict is bound to */
} GateCtx;

static void
gate_judge (GateCtx *gate, AirlockArch arch, AirlockVm *vm, const AirlockImage *oci)
{
  gate->verdicts[arch] = airlock_verdict_judge_run (vm, gate->policy);
  gate->digests[arch] = g_strdup (oci ? oci->manifest_digest : NULL);
}

/* Returns the exit status for this arch. */
static int
run_one (AirlockArch arch, const AirlockGuestImageOptions *img_opts,
         const AirlockVmOptions *vm_opts, const AirlockImage *oci, const char *out_dir,
         GateCtx *gate, gboolean json)
{
  g_autoptr (AirlockGuestImage) image = NULL;
  g_autoptr (AirlockVm) vm = NULL;
  g_autoptr (GError) error = NULL;
  const char *arch_name = airlock_arch_to_string (arch);
  GPtrArray *swept;
  GPtrArray *log;
  gboolean complete;
  const AirlockTrailer *trailer;

  if (out_dir)
    {
      g_autofree char *dir = g_build_filename (out_dir, arch_name, NULL);

      /* Refused before the run, not after it. */
      if (g_file_test (dir, G_FILE_TEST_EXISTS | G_FILE_TEST_IS_SYMLINK))
        {
          fprintf (stderr, "airlock run: %s: '%s' exists; a run directory is never overwritten\n",
                   arch_name, dir);
          return HARNESS_EXIT_USAGE;
        }
    }
  image = airlock_guest_image_ensure (arch, img_opts, &error);
  harness_progress_done ();
  if (!image)
    {
      fprintf (stderr, "airlock run: %s: %s\n", arch_name, error->message);
      return HARNESS_EXIT_SETUP;
    }
  vm = airlock_vm_new (arch, image, vm_opts, &error);
  if (!vm)
    {
      fprintf (stderr, "airlock run: %s: %s\n", arch_name, error->message);
      return g_error_matches (error, AIRLOCK_RUN_SPEC_ERROR, AIRLOCK_RUN_SPEC_ERROR_INVALID)
                 || g_error_matches (error, AIRLOCK_RUN_SPEC_ERROR,
                                     AIRLOCK_RUN_SPEC_ERROR_TOO_LARGE)
               ? HARNESS_EXIT_USAGE
               : HARNESS_EXIT_SETUP;
    }
  swept = airlock_vm_get_swept (vm);
  for (guint i = 0; i < swept->len; i++)
    fprintf (stderr, "airlock: removed domain '%s' left behind by a crashed run\n",
             (const char *) swept->pdata[i]);
  if (airlock_vm_get_accel_notice (vm))
    fprintf (stderr, "airlock: %s: %s\n", arch_name, airlock_vm_get_accel_notice (vm));
  fprintf (stderr, "airlock: %s: running %s (%s, %s)\n", arch_name, vm_opts->spec->argv[0],
           airlock_vm_get_accel (vm), airlock_vm_get_uri (vm));

  if (!airlock_vm_run (vm, &error))
    {
      fprintf (stderr, "airlock run: %s: %s\n", arch_name, error->message);
      return HARNESS_EXIT_SETUP;
    }

  complete = airlock_vm_is_complete (vm);
  trailer = airlock_channel_get_trailer (airlock_vm_get_channel (vm));
  /* The header goes where the report goes: on stdout for the table, on
   * stderr with --json so stdout stays one JSON object per line. */
  fprintf (json ? stderr : stdout, "%s: %s, %s%s%s\n", arch_name, airlock_vm_get_accel (vm),
           complete ? "run complete" : "run inconclusive",
           complete ? "" : ": ", complete ? "" : airlock_vm_get_reason (vm));
  if (oci)
    fprintf (json ? stderr : stdout, "%s: image %s\n  index    %s\n  manifest %s\n  config   %s\n",
             arch_name, oci->reference, oci->index_digest ? oci->index_digest : "(none)",
             oci->manifest_digest, oci->config_digest);
  print_report (arch, vm, json);
  if (gate)
    gate_judge (gate, arch, vm, oci);
  if (!json && !vm_opts->output_func)
    print_output (arch, vm);
  if (out_dir)
    {
      g_autoptr (GError) werror = NULL;

      /* Written whatever the run's outcome: an inconclusive run's raw
       * stream is the evidence of why. */
      if (!write_run_dir (out_dir, arch, vm, oci, &werror))
        {
          fprintf (stderr, "airlock run: %s: %s\n", arch_name, werror->message);
          return HARNESS_EXIT_SETUP;
        }
      fprintf (stderr, "airlock: %s: run files in %s/%s\n", arch_name, out_dir, arch_name);
    }

  /* What the guest's trusted programs said: why a spec was refused, why
   * the supervisor gave up. */
  log = airlock_channel_get_log (airlock_vm_get_channel (vm));
  if (!complete || (trailer && trailer->end_reason == AIRLOCK_END_ERROR))
    for (guint i = 0; i < log->len; i++)
      fprintf (stderr, "airlock: %s: guest: %s\n", arch_name, (const char *) log->pdata[i]);
  if (!complete)
    {
      g_autoptr (GBytes) console = airlock_vm_get_console (vm);
      gsize len;
      const char *data = g_bytes_get_data (console, &len);
      gsize from = len > 2000 ? len - 2000 : 0;

      fprintf (stderr, "airlock: %s: console tail:\n%.*s\n", arch_name, (int) (len - from),
               data + from);
    }
  fflush (stdout);
  return complete ? HARNESS_EXIT_OK : HARNESS_EXIT_INCONCLUSIVE;
}

#define IMAGE_ROOT "/airlock/image"
#define IMAGE_DISK_SERIAL "airlock-root"
#define DEFAULT_PATH "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

/* One arch of an OCI image: resolve it, make sure its rootfs disk exists,
 * and run its entrypoint (with @args replacing Cmd, as `docker run IMAGE
 * ARGS` does) with its env, working directory and user. */
static int
run_image (AirlockArch arch, AirlockImageSource *source, const char *const *args,
           const char *cache_dir, AirlockVmOptions *vm_opts, guint timeout_ms, gboolean controls,
           const char *out_dir, GateCtx *gate, gboolean json)
{
  const char *arch_name = airlock_arch_to_string (arch);
  g_autoptr (GError) error = NULL;
  g_autoptr (AirlockImage) image = airlock_image_resolve (source, arch, &error);
  g_autofree char *disk = NULL;
  g_auto (GStrv) argv = NULL;
  g_autoptr (GPtrArray) envp = g_ptr_array_new ();
  gboolean have_path = FALSE;
  AirlockImageDiskOptions disk_opts = {
    .cache_dir = cache_dir,
    .progress = harness_progress,
  };
  AirlockGuestImageOptions img_opts = {
    .cache_dir = cache_dir,
    .progress = harness_progress,
  };
  AirlockRunSpec spec = {
    .root = IMAGE_ROOT,
    .root_disk = IMAGE_DISK_SERIAL,
    .timeout_ms = timeout_ms,
    .hostname = "airlock",
    .stdio = TRUE,
    .controls = controls,
  };

  if (!image)
    {
      fprintf (stderr, "airlock run: %s: %s\n", arch_name, error->message);
      return harness_exit_for_image_error (error);
    }
  argv = airlock_image_command (image, args, &error);
  if (!argv)
    {
      fprintf (stderr, "airlock run: %s: %s\n", arch_name, error->message);
      return harness_exit_for_image_error (error);
    }
  disk = airlock_image_disk_ensure (source, image, &disk_opts, &error);
  harness_progress_done ();
  if (!disk)
    {
      fprintf (stderr, "airlock run: %s: %s\n", arch_name, error->message);
      return harness_exit_for_image_error (error);
    }
  /* The image's environment, with a PATH when it has none (as container
   * runtimes add one). */
  for (guint i = 0; image->env && image->env[i]; i++)
    {
      have_path = have_path || g_str_has_prefix (image->env[i], "PATH=");
      g_ptr_array_add (envp, image->env[i]);
    }
  if (!have_path)
    g_ptr_array_add (envp, (gpointer) DEFAULT_PATH);
  g_ptr_array_add (envp, NULL);
  spec.argv = (const char *const *) argv;
  spec.envp = (const char *const *) envp->pdata;
  spec.cwd = image->working_dir && *image->working_dir ? image->working_dir : NULL;
  spec.user = image->user && *image->user ? image->user : NULL;
  vm_opts->spec = &spec;
  vm_opts->root_disk_path = disk;
  return run_one (arch, &img_opts, vm_opts, image, out_dir, gate, json);
}

/* The gate's table: one row per arch, then every reason. */
static int
gate_report (GateCtx *gate, const gboolean *arches)
{
  static const char *const header[] = {
    "arch", "controls", "attempts", "admitted", "denied", "unattributed", "verdict", NULL,
  };
  Table t;
  int status = HARNESS_EXIT_OK;

  table_init (&t, header);
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    {
      AirlockVerdict *v = gate->verdicts[a];
      char *cells[7];

      if (!arches[a])
        continue;
      cells[0] = g_strdup (airlock_arch_to_string ((AirlockArch) a));
      if (!v)
        {
          /* The run never reached a verdict (setup, image error). */
          cells[1] = cells[2] = cells[3] = cells[4] = cells[5] = NULL;
          cells[6] = g_strdup ("inconclusive");
          status = MAX (status, HARNESS_EXIT_INCONCLUSIVE);
          table_add (&t, cells);
          continue;
        }
      cells[1] = g_strdup_printf ("%u/%u", v->n_controls_ok, v->controls->len);
      cells[2] = g_strdup_printf ("%u", v->n_attempts);
      cells[3] = g_strdup_printf ("%u", v->n_admitted);
      cells[4] = g_strdup_printf ("%u", v->n_denied);
      cells[5] = g_strdup_printf ("%u", v->n_unattributed);
      cells[6] = g_strdup (airlock_verdict_kind_to_string (v->kind));
      table_add (&t, cells);
      if (v->kind == AIRLOCK_VERDICT_INCONCLUSIVE)
        status = MAX (status, HARNESS_EXIT_INCONCLUSIVE);
      else if (v->kind == AIRLOCK_VERDICT_FAIL && status == HARNESS_EXIT_OK)
        status = HARNESS_EXIT_FAIL;
    }
  printf ("\nverdict\n");
  table_print (&t, "  ");
  for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
    {
      AirlockVerdict *v = gate->verdicts[a];

      if (!arches[a] || !v)
        continue;
      if (gate->digests[a])
        printf ("%s: bound to manifest %s\n", airlock_arch_to_string ((AirlockArch) a),
                gate->digests[a]);
      for (guint i = 0; i < v->reasons->len; i++)
        printf ("%s: %s\n", airlock_arch_to_string ((AirlockArch) a),
                (const char *) v->reasons->pdata[i]);
    }
  return status;
}

static int run_main (int argc, char **argv, gboolean gate_mode);

int
cmd_run (int argc, char **argv)
{
  return run_main (argc, argv, FALSE);
}

/* `airlock gate`: `run --image --controls` on every arch, then the verdict
 * (lib/gate/verdict.h) under the policy (lib/policy, default: no egress). */
int
cmd_gate (int argc, char **argv)
{
  return run_main (argc, argv, TRUE);
}

static int
run_main (int argc, char **argv, gboolean gate_mode)
{
  g_autofree char *policy_file = NULL;
  g_autofree char *test_mode = NULL;
  g_auto (GStrv) allow_rules = NULL;
  g_autoptr (AirlockPolicy) policy = NULL;
  GateCtx gate_ctx = { NULL };
  GateCtx *gate = NULL;
  g_autofree char *arch_spec = NULL;
  g_autofree char *uri = NULL;
  g_autofree char *accel_name = NULL;
  g_autofree char *cache_dir = NULL;
  g_autofree char *program = NULL;
  g_autofree char *image_ref = NULL;
  g_autofree char *stdin_file = NULL;
  g_autofree char *out_dir = NULL;
  gboolean controls = FALSE;
  g_autoptr (GBytes) stdin_data = NULL;
  g_autoptr (GInputStream) stdin_stream = NULL;
  int timeout_s = DEFAULT_TIMEOUT_S;
  int boot_timeout = 60;
  gboolean json = FALSE;
  gboolean arches[AIRLOCK_N_ARCHES];
  AirlockAccel accel = AIRLOCK_ACCEL_AUTO;
  g_autoptr (GError) error = NULL;
  g_autoptr (GOptionContext) ctx = NULL;
  g_autoptr (GPtrArray) workload_argv = g_ptr_array_new_with_free_func (g_free);
  int n_opts = argc;
  int status = HARNESS_EXIT_OK;
  GOptionEntry entries[] = {
    { "arch", 'a', 0, G_OPTION_ARG_STRING, &arch_spec, "amd64, arm64 or all (one after the other)", "ARCH" },
    { "image", 'i', 0, G_OPTION_ARG_STRING, &image_ref,
      "OCI image to run: oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE", "REF" },
    { "guest-program", 'p', 0, G_OPTION_ARG_STRING, &program,
      "test program to run instead: /bin/NAME in the guest's testroot", "NAME" },
    { "timeout", 't', 0, G_OPTION_ARG_INT, &timeout_s, "end the workload after S seconds (default: 30)", "S" },
    { "stdin", 0, 0, G_OPTION_ARG_FILENAME, &stdin_file,
      "feed FILE to the workload's stdin (default: end of file at once; - reads ours)", "FILE" },
    { "controls", 0, 0, G_OPTION_ARG_NONE, &controls,
      "run the negative controls first, in the same boot (listed as their own attempts)", NULL },
    { "out", 'o', 0, G_OPTION_ARG_FILENAME, &out_dir,
      "write the run's files (evidence stream, events, console, output, run.json) to DIR/ARCH/", "DIR" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &json, "print one JSON object per event instead of the tables", NULL },
    { "connect", 'c', 0, G_OPTION_ARG_STRING, &uri,
      "libvirt URI (default: $AIRLOCK_CONNECT, else the embedded driver)", "URI" },
    { "accel", 0, 0, G_OPTION_ARG_STRING, &accel_name, "auto, tcg or kvm (default: auto)", "ACCEL" },
    { "boot-timeout", 0, 0, G_OPTION_ARG_INT, &boot_timeout, "seconds from start to hello (default: 60)", "S" },
    { "cache-dir", 0, 0, G_OPTION_ARG_FILENAME, &cache_dir, "cache directory (default: $AIRLOCK_CACHE_DIR or ~/.cache/airlock)", "DIR" },
    { "test-mode", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &test_mode, "guest misbehaviour, for tests", "MODE" },
    { "policy", 0, 0, G_OPTION_ARG_FILENAME, &policy_file, "gate: the allow-list (docs/policy.md; default: no egress)", "FILE" },
    { "allow", 0, 0, G_OPTION_ARG_STRING_ARRAY, &allow_rules, "gate: one more allow rule, e.g. 'allow tcp 10.0.0.0/8 port 443' (repeatable)", "RULE" },
    { NULL },
  };

  /* Everything after "--" is the workload's, untouched by option parsing. */
  for (int i = 1; i < argc; i++)
    if (g_str_equal (argv[i], "--"))
      {
        n_opts = i;
        for (int j = i + 1; j < argc; j++)
          g_ptr_array_add (workload_argv, g_strdup (argv[j]));
        break;
      }

  ctx = g_option_context_new (gate_mode
                              ? "- the release gate: run an image on each arch with the negative "
                                "controls and judge it [-- ARGS]"
                              : "- run an image or a test program under the supervisor [-- ARGS]");
  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, &n_opts, &argv, &error))
    {
      fprintf (stderr, "airlock run: %s\n", error->message);
      return HARNESS_EXIT_USAGE;
    }
  if (n_opts > 1)
    {
      fprintf (stderr, "airlock run: unexpected argument '%s' (the program's arguments go after --)\n",
               argv[1]);
      return HARNESS_EXIT_USAGE;
    }
  if (!arch_spec && gate_mode)
    arch_spec = g_strdup ("all");   /* a release is gated on every arch */
  if (!arch_spec)
    {
      fprintf (stderr, "airlock run: --arch is required (amd64, arm64 or all)\n");
      return HARNESS_EXIT_USAGE;
    }
  if (gate_mode)
    {
      if (!image_ref || program)
        {
          fprintf (stderr, "airlock gate: --image REF is required (a test program cannot be gated)\n");
          return HARNESS_EXIT_USAGE;
        }
      controls = TRUE;
      policy = policy_file ? airlock_policy_load (policy_file, &error) : airlock_policy_new_default ();
      for (guint i = 0; policy && allow_rules && allow_rules[i]; i++)
        if (!airlock_policy_append (policy, allow_rules[i], strlen (allow_rules[i]), "--allow", &error))
          g_clear_pointer (&policy, airlock_policy_free);
      if (!policy)
        {
          fprintf (stderr, "airlock gate: %s\n", error->message);
          return HARNESS_EXIT_USAGE;
        }
      gate_ctx.policy = policy;
      gate = &gate_ctx;
    }
  else if (policy_file || allow_rules)
    {
      fprintf (stderr, "airlock run: --policy and --allow belong to 'airlock gate'\n");
      return HARNESS_EXIT_USAGE;
    }
  if (!harness_parse_arches (arch_spec, arches, &error))
    {
      fprintf (stderr, "airlock run: %s\n", error->message);
      return HARNESS_EXIT_USAGE;
    }
  if (!image_ref == !program)
    {
      fprintf (stderr, "airlock run: give either --image REF or --guest-program NAME\n");
      return HARNESS_EXIT_USAGE;
    }
  if (program && (!*program || strchr (program, '/') || g_str_equal (program, ".")
                  || g_str_equal (program, "..")))
    {
      fprintf (stderr, "airlock run: --guest-program needs the NAME of a program in the testroot's "
               "/bin, e.g. --guest-program connect-v4\n");
      return HARNESS_EXIT_USAGE;
    }
  if (accel_name && !airlock_accel_from_string (accel_name, &accel))
    {
      fprintf (stderr, "airlock run: unknown accelerator '%s' (expected auto, tcg or kvm)\n", accel_name);
      return HARNESS_EXIT_USAGE;
    }
  if (timeout_s <= 0 || timeout_s > MAX_TIMEOUT_S || boot_timeout <= 0)
    {
      fprintf (stderr, "airlock run: --timeout must be 1 to %d seconds, --boot-timeout positive\n",
               MAX_TIMEOUT_S);
      return HARNESS_EXIT_USAGE;
    }

  if (stdin_file)
    {
      g_autofree char *contents = NULL;
      gsize len = 0;

      if (g_str_equal (stdin_file, "-") && arches[AIRLOCK_ARCH_AMD64] && arches[AIRLOCK_ARCH_ARM64])
        {
          fprintf (stderr, "airlock run: --stdin - streams one input: give one --arch "
                   "(or a file, which each arch gets whole)\n");
          return HARNESS_EXIT_USAGE;
        }
      if (g_str_equal (stdin_file, "-"))
        /* Streamed as it comes, and the workload's output printed live:
         * a stdio server can be spoken to from a terminal or a pipe. */
        stdin_stream = g_unix_input_stream_new (STDIN_FILENO, FALSE);
      else if (!g_file_get_contents (stdin_file, &contents, &len, &error))
        {
          fprintf (stderr, "airlock run: --stdin: %s\n", error->message);
          return HARNESS_EXIT_USAGE;
        }
      else
        stdin_data = g_bytes_new_take (g_steal_pointer (&contents), len);
    }

  if (image_ref)
    {
      g_autoptr (AirlockImageSource) source = airlock_image_source_open (image_ref, &error);
      AirlockVmOptions vm_opts = {
        .uri = uri,
        .cache_dir = cache_dir,
        .accel = accel,
        .boot_timeout_ms = (guint) boot_timeout * 1000,
        .stdin_data = stdin_data,
        .stdin_stream = stdin_stream,
        .output_func = stdin_stream ? live_output : NULL,
        .test_mode = test_mode,
      };

      if (!source)
        {
          fprintf (stderr, "airlock run: %s\n", error->message);
          return harness_exit_for_image_error (error);
        }
      g_ptr_array_add (workload_argv, NULL);
      for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
        if (arches[a])
          {
            int s = run_image ((AirlockArch) a, source,
                               workload_argv->len > 1 ? (const char *const *) workload_argv->pdata
                                                      : NULL,
                               cache_dir, &vm_opts, (guint) timeout_s * 1000, controls, out_dir,
                               gate, json);

            if (s == HARNESS_EXIT_USAGE)
              return s;
            status = MAX (status, s);
          }
      if (gate)
        {
          int g = gate_report (gate, arches);

          for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
            {
              g_clear_pointer (&gate->verdicts[a], airlock_verdict_free);
              g_clear_pointer (&gate->digests[a], g_free);
            }
          /* An image or setup error outranks the verdict's status. */
          return status != HARNESS_EXIT_OK && status != HARNESS_EXIT_INCONCLUSIVE ? status : g;
        }
      return status;
    }

  {
    g_autofree char *path = g_strconcat ("/bin/", program, NULL);
    AirlockGuestImageOptions img_opts = {
      .cache_dir = cache_dir,
      .with_testroot = TRUE,
      .progress = harness_progress,
    };
    AirlockRunSpec spec = {
      .envp = run_envp,
      .cwd = "/",
      .uid = 0,
      .gid = 0,
      .root = TESTROOT,
      .timeout_ms = (guint) timeout_s * 1000,
      .hostname = "airlock",
      .stdio = TRUE,
      .controls = controls,
    };
    AirlockVmOptions vm_opts = {
      .uri = uri,
      .cache_dir = cache_dir,
      .accel = accel,
      .boot_timeout_ms = (guint) boot_timeout * 1000,
      .spec = &spec,
      .stdin_data = stdin_data,
      .stdin_stream = stdin_stream,
      .output_func = stdin_stream ? live_output : NULL,
      .test_mode = test_mode,
    };

    g_ptr_array_insert (workload_argv, 0, g_steal_pointer (&path));
    g_ptr_array_add (workload_argv, NULL);
    spec.argv = (const char *const *) workload_argv->pdata;

    for (unsigned a = 0; a < AIRLOCK_N_ARCHES; a++)
      if (arches[a])
        {
          int s = run_one ((AirlockArch) a, &img_opts, &vm_opts, NULL, out_dir, NULL, json);

          /* Usage beats setup beats inconclusive: the most actionable. */
          if (s == HARNESS_EXIT_USAGE)
            return s;
          status = MAX (status, s);
        }
  }
  return status;
}
