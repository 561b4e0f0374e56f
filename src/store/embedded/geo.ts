/** Geo query operators for mingo (filled in later). */
export const geoQueryOperators: Record<string, unknown> = {};
