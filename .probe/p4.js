const c = await api.create("arbitraryurl", {ref: "a", prog: 1});
const { ObjectId, DBRef } = await import("../src/store/bson.ts");
const id = new ObjectId();
await r.service.store.collection("invoices").insertMany([{ _id: id, persondbref: new DBRef("contacts", new ObjectId(c._id)) }]);
const g = await api.get(`invoices/${id.toHexString()}`); console.log(JSON.stringify(g.body._links.related), JSON.stringify(g.body.persondbref));
