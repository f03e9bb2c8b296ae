// The endpoint fields as the service describes them in its own OpenAPI document (public, same
// origin): the form is built from it, so a field or an enumeration value has one home.

export interface FieldSpec {
  name: string;
  kind: "text" | "integer" | "number" | "enum" | "object";
  values: string[];
  maxLength?: number;
}

let cached: Promise<FieldSpec[]> | null = null;

interface PropertySchema {
  type?: string | string[];
  enum?: (string | null)[];
  anyOf?: PropertySchema[];
  maxLength?: number;
}

function types(p: PropertySchema): string[] {
  const own = Array.isArray(p.type) ? p.type : p.type ? [p.type] : [];
  return [...own, ...(p.anyOf ?? []).flatMap(types)];
}

function enums(p: PropertySchema): string[] {
  const own = (p.enum ?? []).filter((v): v is string => typeof v === "string");
  return [...own, ...(p.anyOf ?? []).flatMap(enums)];
}

export function endpointFields(): Promise<FieldSpec[]> {
  if (!cached) {
    cached = fetch("/api/openapi.json", { credentials: "omit" })
      .then((r) => r.json())
      .then((doc) => {
        const props: Record<string, PropertySchema> = doc.components.schemas.Endpoint.properties;
        return Object.entries(props)
          .filter(([name]) => name !== "id" && name !== "password")
          .map(([name, p]): FieldSpec => {
            const t = types(p);
            const values = enums(p);
            const kind = values.length ? "enum"
              : t.includes("integer") ? "integer"
              : t.includes("number") ? "number"
              : t.includes("object") ? "object" : "text";
            return { name, kind, values, maxLength: p.maxLength };
          });
      })
      .catch((e) => {
        cached = null;
        throw e;
      });
  }
  return cached;
}

/** "ipAddress" → "IP address", "listenerServiceId" → "Listener service id". */
export function label(name: string): string {
  const words = name.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase();
  return (words.charAt(0).toUpperCase() + words.slice(1)).replace(/\bip\b/i, "IP").replace(/\bsip\b/i, "SIP")
    .replace(/^Ip /, "IP ");
}
