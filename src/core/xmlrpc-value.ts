// The one XML-RPC value class that layers below the admin server need:
// statistics mark their doubles with it, the codec in src/admin writes them.

/**
 * A number that must be written as `<double>` even when it is whole
 * (MS-FSCADM 2.2.5: statistics such as Downloaded are doubles, `40.0`).
 * Parsing returns one for every `<double>`. `valueOf`/`toJSON` give the
 * number, so `+d`, templates and JSON.stringify see a plain number.
 */
export class XmlRpcDouble {
  readonly value: number;
  constructor(value: number) {
    this.value = value;
  }
  valueOf(): number {
    return this.value;
  }
  toString(): string {
    return String(this.value);
  }
  toJSON(): number {
    return this.value;
  }
}
