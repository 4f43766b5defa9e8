/** A fraction as a percentage with one decimal: 0.4667 -> `46.7%`. */
export const percent = (fraction: number) => `${(100 * fraction).toFixed(1)}%`;
