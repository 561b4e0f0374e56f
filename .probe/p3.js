const c = await api.create("arbitraryurl", {ref: "a"});
for (const u of ["", "arbitraryurl", `arbitraryurl/${c._id}`]) {
  const g = await fetch(r.url + u); await g.text();
  const h = await fetch(r.url + u, {method: "HEAD"}); await h.text();
  console.log(u, "\n GET ", JSON.stringify([...g.headers]), "\n HEAD", JSON.stringify([...h.headers]));
}
