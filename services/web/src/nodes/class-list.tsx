import { useState } from "preact/hooks";
import { getClassDefinitions } from "../api/registry.ts";
import { useLatest } from "../ui/use-latest.ts";
import { classInputs, classOutputs, type ComfyNodeDefinition } from "./class-definition.ts";

/** More classes than this start folded, behind their count and a filter. */
const OPEN_UP_TO = 12;

/** The node classes of one version: folded when many, filterable, each opening its inputs and outputs. */
export function ClassList({ id, version, banned, preempted }: { id: string; version: string; banned: boolean; preempted?: string[] }) {
  const loaded = useLatest(`${id}|${version}|classes`, (signal) => getClassDefinitions(id, version, banned, signal));
  const [filter, setFilter] = useState("");
  const classes = loaded.data?.comfy_nodes.filter((c) => c.comfy_node_name) ?? null;
  const words = filter.trim().toLowerCase();
  const shown = classes?.filter((c) => !words || `${c.comfy_node_name} ${c.category ?? ""}`.toLowerCase().includes(words));
  const list = (
    <>
      {classes && classes.length > OPEN_UP_TO / 2 && (
        <label class="class-filter">
          Filter classes{" "}
          <input type="search" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} placeholder="name or category" />
        </label>
      )}
      {shown && shown.length === 0 && words && <p class="muted">No class matches “{filter}”.</p>}
      {shown && shown.length > 0 && (
        <ul class="classes">
          {shown.map((c) => (
            <ClassItem key={c.comfy_node_name} def={c} />
          ))}
        </ul>
      )}
    </>
  );
  return (
    <section class="card" aria-labelledby="classes-h">
      {classes && classes.length > OPEN_UP_TO ? (
        <details class="fold">
          <summary>
            <h2 id="classes-h">Node classes ({classes.length})</h2>
          </summary>
          {list}
        </details>
      ) : (
        <>
          <h2 id="classes-h">Node classes{classes ? ` (${classes.length})` : ""}</h2>
          {list}
        </>
      )}
      {loaded.error && <p class="muted">{loaded.error}</p>}
      {classes && classes.length === 0 && <p class="muted">This version lists no node classes.</p>}
      {preempted?.length ? (
        <>
          <h3>Preempted node names</h3>
          <ul class="plain names">
            {preempted.map((c) => (
              <li key={c}>
                <code>{c}</code>
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </section>
  );
}

function ClassItem({ def }: { def: ComfyNodeDefinition }) {
  const inputs = classInputs(def);
  const outputs = classOutputs(def);
  const known = inputs !== null || outputs !== null || def.description || def.category;
  return (
    <li class="class" data-class={def.comfy_node_name}>
      <details>
        <summary>
          <code>{def.comfy_node_name}</code>
          {def.deprecated && <span class="badge">deprecated</span>}
          {def.experimental && <span class="badge">experimental</span>}
          {def.category && <span class="muted small"> · {def.category}</span>}
        </summary>
        <div class="class-body">
          {def.description && <p>{def.description}</p>}
          {inputs && (
            <table class="io" aria-label={`${def.comfy_node_name} inputs`}>
              <caption>Inputs</caption>
              <tbody>
                {inputs.length === 0 && (
                  <tr>
                    <td class="muted">none</td>
                  </tr>
                )}
                {inputs.map((i) => (
                  <tr key={`${i.group}-${i.name}`} data-input={i.name}>
                    <th scope="row">{i.name}</th>
                    <td>
                      <code>{i.type}</code>
                      {i.group !== "required" && <span class="muted small"> {i.group}</span>}
                      {i.options && <span class="muted small"> {i.options}</span>}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {outputs && (
            <table class="io" aria-label={`${def.comfy_node_name} outputs`}>
              <caption>Outputs</caption>
              <tbody>
                {outputs.length === 0 && (
                  <tr>
                    <td class="muted">none</td>
                  </tr>
                )}
                {outputs.map((o, n) => (
                  <tr key={n} data-output={o.name}>
                    <th scope="row">{o.name}</th>
                    <td>
                      <code>{o.type}</code>
                      {o.list && <span class="muted small"> list</span>}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {def.function && (
            <p class="muted small">
              Runs <code>{def.function}</code>
            </p>
          )}
          {!known && <p class="muted small">This server sends only the class's name, not its inputs and outputs.</p>}
        </div>
      </details>
    </li>
  );
}
