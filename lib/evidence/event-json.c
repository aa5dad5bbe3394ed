/* One supervisor record as one JSON object: what `airlock run --json`
 * prints and an evidence bundle's events.jsonl holds, one per line.  The
 * same function writes and (in `airlock verify`) re-derives each line, so
 * a line that differs was changed. */
#include "config.h"

#include "evidence/event.h"
#include "evidence/frame-private.h"
#include "protocol.h"

#include <json-glib/json-glib.h>
#include <sys/socket.h>

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

void
airlock_event_add_json_members (JsonBuilder *b, AirlockArch arch, const AirlockEvent *ev)
{
  g_autofree char *key_line = airlock_event_key_line (ev);
  g_autofree char *outcome = airlock_event_outcome (ev);

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
  add_sockaddr (b, "addr", ev->addr, ev->addr_decoded, ev->addr_sa, ev->addr_error);
  if (ev->has_addrlen)
    SET_INT (b, "addrlen", ev->addrlen);
  add_sockaddr (b, "peer", ev->peer, ev->peer_decoded, ev->peer_sa, ev->peer_error);
  add_sockaddr (b, "local", ev->local, ev->local_decoded, ev->local_sa, NULL);
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
}

char *
airlock_event_to_json (AirlockArch arch, const AirlockEvent *ev)
{
  g_autoptr (JsonBuilder) b = json_builder_new ();
  g_autoptr (JsonGenerator) gen = json_generator_new ();
  g_autoptr (JsonNode) root = NULL;

  json_builder_begin_object (b);
  airlock_event_add_json_members (b, arch, ev);
  json_builder_end_object (b);

  root = json_builder_get_root (b);
  json_generator_set_root (gen, root);
  return json_generator_to_data (gen, NULL);
}

