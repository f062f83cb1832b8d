const k = "con" + "structor";
const f = [][k][k];
