/* What the sinkhole served a run (lib/bundle/bundle-network.h), as
 * `airlock run`, `gate` and `show` print it: the names asked and the
 * addresses handed out, then each connection with what it sent. */
#pragma once

#include <airlock.h>
#include <json-glib/json-glib.h>

/* "LABEL: network, as the sinkhole served it (…)" and its two tables, the
 * workload's lookups and connections (the negative controls' counted, not
 * listed), and what the record file says of its own wholeness. */
void network_tables_print (const char *label, const AirlockNetworkReport *report);

/* The same as a JSON object, every record (the controls' marked). */
void network_report_add_json (JsonBuilder *b, const AirlockNetworkReport *report);
