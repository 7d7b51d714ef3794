// Who owns each event family (the topic's first word): the host owns its own (the app
// lifecycle, the audit trail, webhook operations); an app claims its families when it loads and
// gives them back when it unloads. The unit of work asks here before an event is written, so
// the rule "only a family's owner emits in it" needs nothing above the events domain.

/** Event prefixes the host owns: the app lifecycle, the audit trail, webhook operations. */
export const CORE_PREFIXES = ['app', 'audit', 'webhook'];

export class EventFamilies {
  private owners = new Map<string, string>(CORE_PREFIXES.map((p) => [p, 'core']));

  /** `core` or the app id that owns a prefix, if any. */
  ownerOf(prefix: string): string | undefined {
    return this.owners.get(prefix);
  }

  /** Gives `prefixes` to `owner`; a prefix another owner holds is the caller's to refuse first. */
  claim(owner: string, prefixes: Iterable<string>): void {
    for (const p of prefixes) this.owners.set(p, owner);
  }

  /** Gives back every prefix `owner` holds. */
  release(owner: string): void {
    for (const [p, o] of this.owners) if (o === owner) this.owners.delete(p);
  }
}
