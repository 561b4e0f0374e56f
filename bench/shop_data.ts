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

const CATEGORIES = ["books", "music", "games", "tools", "garden"];
const STATUSES = ["new", "paid", "shipped", "cancelled"];

/** Product number `n` of the shop domain. */
export function product(n: number) {
  return {
    sku: `SKU-${n}`,
    title: `Product ${n}`,
    category: CATEGORIES[n % CATEGORIES.length],
    price: 5 + n % 50,
    stock: 100,
  };
}

/** Order number `n`: one of `customers` buys one of `products` (ids of stored ones). */
export function order(
  n: number,
  ids: { customers: Array<{ _id: string }>; products: Array<{ _id: string }> },
) {
  const { customers, products } = ids;
  return {
    customer: customers[n % customers.length]._id,
    items: [{ product: products[n % products.length]._id, quantity: 1 + n % 3, price: 10 }],
    total: 10 * (1 + n % 3),
    status: STATUSES[n % STATUSES.length],
  };
}
