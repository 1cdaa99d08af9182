import type { Subject } from './subjects';
import type { FieldIssue } from './validation/dto-validation';

/** `inbound`: other teams produce it against our schema. `outbound`: we produce it, other teams consume it. */
export type Direction = 'inbound' | 'outbound';

/**
 * One message type at one version: its DTO, its cross-field rules and an example. One file per
 * (type, version) under `messages/`; `registry.ts` lists them.
 */
export interface MessageDefinition<TType extends Subject = Subject, TVersion extends number = number, TData = unknown> {
  readonly type: TType;
  readonly version: TVersion;
  /** `${type}.v${version}`: the `schema` field of the envelope. */
  readonly schema: `${TType}.v${TVersion}`;
  readonly direction: Direction;
  /** class-validator DTO for `data`. */
  readonly dto: new () => object;
  /**
   * Checks the DTO cannot express (free-form sub-objects); always run on the raw plain data, defensively.
   * Paths are relative to `data`.
   */
  extraChecks?(data: Readonly<Record<string, unknown>>): FieldIssue[];
  /**
   * Cross-field invariants; run only when every field is valid on its own. Paths relative to `data`.
   * (Method syntax on purpose: it lets a definition of any payload type stand in a MessageDefinition list.)
   */
  invariants?(data: TData): FieldIssue[];
  /** A valid payload, used by the docs and by tests here and in other teams' code. */
  readonly example: TData;
  /**
   * A batch message (issue 28): the array field of `data` whose items stand alone. An invalid item is taken
   * out and reported (`DecodeSuccess.refused`) instead of refusing the whole message, as long as everything
   * else is valid.
   */
  readonly itemised?: string;
}

export function defineMessage<const TType extends Subject, const TVersion extends number, TData>(
  def: Omit<MessageDefinition<TType, TVersion, TData>, 'schema'>,
): MessageDefinition<TType, TVersion, TData> {
  return { ...def, schema: `${def.type}.v${def.version}` };
}

export function schemaName(type: string, version: number): string {
  return `${type}.v${version}`;
}
