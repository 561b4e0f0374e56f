const tid = "5f0c1a2b3c4d5e6f7a8b9c0d";
let x = await api.post("arbitraryurl", [{ref:"a", tid, rows:[{sku:"5f0c1a2b3c4d5e6f7a8b9c0e", price:1}], id_list:[tid], role:["agent"]}, {ref:"b"}]);
console.log(x.status);
for (const w of [`{"tid":"${tid}"}`, `{"tid":{"$in":["${tid}"]}}`, `{"id_list":{"$in":["${tid}"]}}`, `{"unk":"${tid}"}`, `ref == a`, `{"rows.sku":{"$in":["5f0c1a2b3c4d5e6f7a8b9c0e"]}}`]) {
  const g = await api.get(`arbitraryurl?where=${encodeURIComponent(w)}`);
  console.log(w, g.status, g.body._items?.length, g.body._error?.message ?? "");
}
