/* The sinkhole's records as the command prints them (network-table.h). */
#include "config.h"

#include "network-table.h"

#include "harness.h"
#include "table.h"

#include <airlock.h>
#include <stdio.h>

void
network_tables_print (const char *label, const AirlockNetworkReport *report)
{
  static const char *const lookup_header[] = {
    "DNS question", "type", "answer", "over", "server", NULL,
  };
  static const char *const connection_header[] = {
    "name", "address", "port", "protocol", "sent", "bytes in", "bytes out", "response", NULL,
  };
  Table lookups, connections;
  guint n_lookups = 0, n_connections = 0;

  table_init (&lookups, lookup_header);
  for (guint i = 0; i < report->lookups->len; i++)
    {
      const AirlockNetworkLookup *l = report->lookups->pdata[i];
      char *cells[5];

      if (l->control)
        continue;
      n_lookups++;
      cells[0] = g_strdup (l->question ? l->question : "(none decoded)");
      cells[1] = g_strdup (l->qtype);
      cells[2] = g_strdup (l->answer);
      cells[3] = g_strdup (l->transport);
      cells[4] = g_strdup (l->server);
      table_add (&lookups, cells);
    }
  table_init (&connections, connection_header);
  for (guint i = 0; i < report->connections->len; i++)
    {
      const AirlockNetworkConnection *c = report->connections->pdata[i];
      char *cells[8];

      if (c->control)
        continue;
      n_connections++;
      cells[0] = g_strdup (c->name);
      cells[1] = g_strdup (c->address);
      cells[2] = c->kind == AIRLOCK_SINKHOLE_RECORD_ICMP ? NULL : g_strdup_printf ("%u", c->port);
      cells[3] = g_strdup (c->protocol);
      cells[4] = g_strdup (c->detail);
      cells[5] = g_strdup_printf ("%" G_GUINT64_FORMAT, c->bytes_in);
      cells[6] = c->kind == AIRLOCK_SINKHOLE_RECORD_TCP
                   ? g_strdup_printf ("%" G_GUINT64_FORMAT, c->bytes_out) : NULL;
      cells[7] = g_strdup (c->response);
      table_add (&connections, cells);
    }

  fprintf (harness_out (),
           "%s: network, as the sinkhole served it (%u lookup%s, %u connection%s", label,
           n_lookups, n_lookups == 1 ? "" : "s", n_connections, n_connections == 1 ? "" : "s");
  if (report->n_controls)
    fprintf (harness_out (), "; the negative controls' %u record%s not listed", report->n_controls,
             report->n_controls == 1 ? "" : "s");
  fprintf (harness_out (), ")\n");
  table_print (&lookups, "  ");
  table_print (&connections, "  ");
  if (!report->complete)
    fprintf (harness_out (), "  the records are incomplete: %s\n",
             report->incomplete_reason ? report->incomplete_reason : "no reason given");
  if (report->records_dropped)
    fprintf (harness_out (), "  %" G_GUINT64_FORMAT " record(s) past the limit were dropped\n",
             report->records_dropped);
  if (report->frames_refused)
    fprintf (harness_out (),
             "  %" G_GUINT64_FORMAT " frame(s) under a forged source were refused; the first: %s\n",
             report->frames_refused, report->first_refused ? report->first_refused : "?");
}

void
network_report_add_json (JsonBuilder *b, const AirlockNetworkReport *report)
{
  json_builder_begin_object (b);
  airlock_json_set_bool (b, "complete", report->complete);
  airlock_json_set_str (b, "incomplete_reason", report->incomplete_reason);
  airlock_json_set_int (b, "records_dropped", (gint64) MIN (report->records_dropped, (guint64) G_MAXINT64));
  airlock_json_set_int (b, "frames_refused", (gint64) MIN (report->frames_refused, (guint64) G_MAXINT64));
  airlock_json_set_str (b, "first_refused", report->first_refused);
  json_builder_set_member_name (b, "lookups");
  json_builder_begin_array (b);
  for (guint i = 0; i < report->lookups->len; i++)
    {
      const AirlockNetworkLookup *l = report->lookups->pdata[i];

      json_builder_begin_object (b);
      airlock_json_set_int (b, "line", l->line);
      airlock_json_set_str (b, "question", l->question);
      airlock_json_set_str (b, "type", l->qtype);
      airlock_json_set_str (b, "answer", l->answer);
      airlock_json_set_str (b, "transport", l->transport);
      airlock_json_set_str (b, "server", l->server);
      airlock_json_set_int (b, "port", l->port);
      airlock_json_set_int (b, "time_us", l->time_us);
      airlock_json_set_bool (b, "control", l->control);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_set_member_name (b, "connections");
  json_builder_begin_array (b);
  for (guint i = 0; i < report->connections->len; i++)
    {
      const AirlockNetworkConnection *c = report->connections->pdata[i];

      json_builder_begin_object (b);
      airlock_json_set_int (b, "line", c->line);
      airlock_json_set_str (b, "key", c->key);
      airlock_json_set_str (b, "name", c->name);
      airlock_json_set_str (b, "address", c->address);
      airlock_json_set_int (b, "port", c->port);
      airlock_json_set_str (b, "protocol", c->protocol);
      airlock_json_set_str (b, "sent", c->detail);
      airlock_json_set_int (b, "bytes_in", (gint64) MIN (c->bytes_in, (guint64) G_MAXINT64));
      airlock_json_set_int (b, "bytes_out", (gint64) MIN (c->bytes_out, (guint64) G_MAXINT64));
      airlock_json_set_str (b, "response", c->response);
      airlock_json_set_int (b, "time_us", c->time_us);
      airlock_json_set_int (b, "end_us", c->end_us);
      airlock_json_set_bool (b, "control", c->control);
      json_builder_end_object (b);
    }
  json_builder_end_array (b);
  json_builder_end_object (b);
}
