// Small shapes shared by several endpoint families.

/** An object the spec only partly describes: the named fields are typed, anything else passes through. */
export type Open<T> = T & { [key: string]: unknown };

/** A string-valued field whose known values are listed, but whose full set the spec does not show. */
// `string & {}` keeps literal autocompletion while accepting any string.
export type OpenString<K extends string> = K | (string & {});
