/** Who acts: a person, an API key, the operator's CLI, or the host itself (the scheduler, the delivery loop). */
export interface Actor {
  type: 'user' | 'key' | 'cli' | 'system';
  id: string;
}

export const CLI_ACTOR: Actor = { type: 'cli', id: 'operator' };
export const SYSTEM_ACTOR: Actor = { type: 'system', id: 'host' };
