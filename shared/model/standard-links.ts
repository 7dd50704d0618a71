/** The spec's standard links (no imports: the db layer rebuilds stored event documents with them). */

export interface LinkDef {
  readonly relation: string;
  /** Relative to the object's Href. */
  readonly href: string;
  readonly text: string;
}

/** The spec's standard links, carried by every object. */
export const STANDARD_LINKS: readonly LinkDef[] = Object.freeze([
  { relation: 'Meta', href: 'meta', text: 'Metadata' },
  { relation: 'Monikers', href: 'monikers', text: 'Monikers' },
  { relation: 'CommonName', href: 'commonname', text: 'Common Name' },
  { relation: 'Images', href: 'images', text: 'Images' },
  { relation: 'TakeOwnership', href: 'takeownership', text: 'Take Ownership' },
  { relation: 'Connections', href: 'connections', text: 'Connected Objects' },
  { relation: 'References', href: 'references', text: 'Referencing Objects' },
  { relation: 'Notes', href: 'notes', text: 'Notes' },
]);
