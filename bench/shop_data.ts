/**
 * The shop domain's generated data, shared by the benches: customer `n` (an e-mail made from
 * `prefix` and `n`, so every customer has its own lookup value).
 */
const COUNTRIES = ["FR", "DE", "IT", "ES", "NL", "SE", "PL", "PT"];

/** Customer number `n` of the shop domain. */
export function customer(n: number, prefix = "c") {
  return {
    name: `Customer ${n}`,
    email: `${prefix}${n}@shop.example.org`,
    age: 18 + (n * 37) % 70,
    country: COUNTRIES[n % COUNTRIES.length],
    vip: n % 10 === 0,
    tags: ["newsletter", `t${n % 10}`],
    address: { street: `${n} Main Street`, city: "Lyon", zip: "69001" },
  };
}
